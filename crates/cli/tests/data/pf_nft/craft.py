#!/usr/bin/env python3
"""Crafted packets for crates/cli/tests/pf_nft_oracle.rs, sent from the client namespace
through the firewall namespace on raw sockets:

    craft.py CLIENT CLIENT2 SERVER SERVER2 NET3_IN NET3_OUT

First single packets: a SYN to a blocked port (5100), an ACK without a connection (to 5006), a
SYN from the second client address, UDP to a closed port (5201: the server answers port
unreachable), SYNs to the second server address and to two addresses of a third network (one
inside, one outside the table of the `tables` pair), a SYN the wrong way to the client-side
service port (5401). Then a connection made by hand to the sink (5007) — handshake without
options (no window scaling, no SACK), data — and against it, each followed by a pause for the
server's answer:

  1. data far beyond the window            5. data straddling the window's right edge
  2. a RST far from the window (blind)     6. the SYN again (same ISN)
  3. an ACK far beyond what was sent       7. a SYN with another ISN
  4. an ACK 1000 bytes beyond what the     8. ICMP port unreachable quoting the server's
     server sent                              segment, in window, then far out of it
  9. more valid data, a RST inside the window but not at the next sequence number, and a
     valid RST at it.

The client namespace drops its own kernel's RSTs from these source ports (TTL 64; these
packets have TTL 63), or it would reset the hand-made connection. Prints one line per step:
what was sent and what came back.
"""
import os
import random
import socket
import struct
import sys

# The Internet checksum is peer.py's (the sibling test's traffic script).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pf_netns"))
from peer import checksum  # noqa: E402
import time

TTL = 63


IDENT = [0xC000]


def ip(src, dst, proto, l4):
    IDENT[0] += 1
    head = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), IDENT[0], 0, TTL, proto, 0,
        socket.inet_aton(src), socket.inet_aton(dst),
    )
    head = head[:10] + struct.pack("!H", checksum(head)) + head[12:]
    return head + l4


def pseudo(src, dst, proto, n):
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, n)


def tcp(src, dst, sport, dport, seq, ack, flags, payload=b"", win=64240):
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, win, 0, 0)
    c = checksum(pseudo(src, dst, 6, len(h) + len(payload)) + h + payload)
    h = h[:16] + struct.pack("!H", c) + h[18:]
    return ip(src, dst, 6, h + payload)


def udp(src, dst, sport, dport, payload):
    h = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    c = checksum(pseudo(src, dst, 17, len(h) + len(payload)) + h + payload) or 0xFFFF
    return ip(src, dst, 17, h[:6] + struct.pack("!H", c) + payload)


FIN, SYN, RST, PSH, ACK = 1, 2, 4, 8, 16

out = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
inp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
inp.settimeout(0.05)


def send(pkt, dst):
    out.sendto(pkt, (dst, 0))


def icmp_unreach(src, dst, quoted):
    """ICMP port unreachable from src to dst quoting `quoted` (an IP header and 8 bytes)."""
    body = struct.pack("!BBHI", 3, 3, 0, 0) + quoted
    body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    return ip(src, dst, 1, body)


def reply(sport, timeout=0.6, want=None):
    """The first TCP segment to local port `sport` (with all `want` flags) as (seq, ack,
    flags, payload length, window), or None."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            data = inp.recv(65536)
        except socket.timeout:
            continue
        ihl = (data[0] & 15) * 4
        sp, dp, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", data[ihl : ihl + 16])
        if dp == sport and (want is None or flags & want == want):
            return seq, ack, flags, len(data) - ihl - (off >> 4) * 4, win
    return None


def step(what, pkt, dst, sport=None, want=None):
    send(pkt, dst)
    got = reply(sport, want=want) if sport else time.sleep(0.3)
    print(what, "->", got, flush=True)
    return got


def main():
    client, client2, server, server2, net3_in, net3_out = sys.argv[1:7]
    rnd = random.Random(24)
    step("SYN to a blocked port", tcp(client, server, 41000, 5100, rnd.getrandbits(32), 0, SYN), server, 41000)
    step("ACK without a connection", tcp(client, server, 41001, 5006, rnd.getrandbits(32), rnd.getrandbits(32), ACK), server, 41001)
    step("SYN from the second client address", tcp(client2, server, 41002, 5006, rnd.getrandbits(32), 0, SYN), server, 41002)
    step("UDP to a closed port", udp(client, server, 41003, 5201, b"anyone there?"), server)
    for port, dst in [(41004, server2), (41005, net3_in), (41006, net3_out)]:
        step("SYN to " + dst, tcp(client, dst, port, 5006, rnd.getrandbits(32), 0, SYN), dst, port)
    step("SYN the wrong way to 5401", tcp(client, server, 41007, 5401, rnd.getrandbits(32), 0, SYN), server, 41007)

    sport, isn = 41010, rnd.getrandbits(32)
    got = step("sink: SYN", tcp(client, server, sport, 5007, isn, 0, SYN), server, sport, SYN | ACK)
    if not got:
        return
    snd, rcv, win = isn + 1, (got[0] + 1) & 0xFFFFFFFF, got[4]
    seg = lambda seq, ack, flags, data=b"": tcp(client, server, sport, 5007, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, flags, data)
    send(seg(snd, rcv, ACK), server)
    data = b"hello sink"
    got = step("sink: data", seg(snd, rcv, ACK | PSH, data), server, sport)
    snd += len(data)
    win = got[4] if got else win
    step("sink: data beyond the window", seg(snd + 0x40000000, rcv, ACK | PSH, b"x" * 20), server, sport)
    step("sink: blind RST", seg(snd + 0x20000000, 0, RST), server, sport)
    step("sink: ACK far beyond what was sent", seg(snd, rcv + 1000000, ACK), server, sport)
    step("sink: ACK 1000 bytes beyond what was sent", seg(snd, rcv + 1000, ACK), server, sport)
    step("sink: data straddling the right edge", seg(snd + win - 5, rcv, ACK | PSH, b"y" * 10), server, sport)
    step("sink: the SYN again", seg(isn, 0, SYN), server, sport)
    step("sink: a SYN with another ISN", seg(isn + 0x30000000, 0, SYN), server, sport)
    # The server's segment the client answers: from the server's port, at its next sequence
    # number (in window), then far from it.
    for what, seq in [("in window", rcv), ("far out of window", rcv + 0x40000000)]:
        quoted = tcp(server, client, 5007, sport, seq & 0xFFFFFFFF, snd & 0xFFFFFFFF, ACK)[:28]
        step("sink: ICMP unreachable quoting a segment " + what, icmp_unreach(client, server, quoted), server)
    step("sink: more data", seg(snd, rcv, ACK | PSH, data), server, sport)
    snd += len(data)
    step("sink: RST inside the window", seg(snd + 100, 0, RST), server, sport)
    step("sink: RST", seg(snd, 0, RST), server)


if __name__ == "__main__":
    main()
