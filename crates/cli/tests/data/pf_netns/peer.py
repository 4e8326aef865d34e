#!/usr/bin/env python3
"""One end of a pf_netns scenario, run in a network namespace by crates/cli/tests/pf_netns.rs
(and pf_nft_oracle.rs): real kernel TCP, UDP and ICMP for captures that sift pf replays.

    peer.py server SCENARIO ADDR PORT   listen, print "ready", serve one exchange, exit
    peer.py client SCENARIO ADDR PORT   one exchange with the server, exit

Scenarios: bulk (2 MB up; the test drops some segments so there are retransmissions and SACK),
zerowin (the server stops reading with a tiny receive buffer until the client's zero-window
probes appear), keepalive (SO_KEEPALIVE with 1 s idle and interval, 3.3 s idle), simclose (both
ends shut down at once; the test drops each first FIN so the FINs cross), http (a request and a
20 kB response), udp (three datagrams echoed), icmp (client only: three echo requests on a raw
socket; the server's kernel answers), sink (server only: accept one connection and read until
it ends or is reset; the peer is craft.py's hand-made connection).
"""
import socket
import struct
import sys
import time

BULK = 2 * 1024 * 1024
ZEROWIN = 400 * 1024


def ready():
    print("ready", flush=True)


def read_all(conn):
    n = 0
    while True:
        b = conn.recv(65536)
        if not b:
            return n
        n += len(b)


def listener(addr, port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        # Before listen, so the accepted socket inherits it (and its window scale fits it).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((addr, port))
    s.listen(4)
    return s


def server(scenario, addr, port):
    if scenario == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, port))
        s.settimeout(10)
        ready()
        for _ in range(3):
            data, peer = s.recvfrom(2048)
            s.sendto(b"echo " + data, peer)
        return
    s = listener(addr, port, 4096 if scenario == "zerowin" else None)
    s.settimeout(15)
    ready()
    conn, _ = s.accept()
    conn.settimeout(15)
    if scenario == "bulk":
        n = read_all(conn)
        conn.sendall(b"got %d" % n)
    elif scenario == "zerowin":
        time.sleep(1.6)
        read_all(conn)
    elif scenario == "keepalive":
        conn.recv(100)
        conn.sendall(b"hello yourself")
        read_all(conn)
    elif scenario == "simclose":
        conn.recv(100)
        conn.shutdown(socket.SHUT_WR)
        read_all(conn)
    elif scenario == "sink":
        # Ends with the peer's RST, or quietly when a firewall blocks it.
        conn.settimeout(5)
        try:
            read_all(conn)
        except (ConnectionResetError, socket.timeout):
            pass
    elif scenario == "http":
        req = b""
        while b"\r\n\r\n" not in req:
            b = conn.recv(4096)
            if not b:
                break
            req += b
        body = bytes(i % 251 for i in range(20000))
        head = b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
        conn.sendall(head + body)
    else:
        sys.exit("unknown scenario " + scenario)
    conn.close()


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def icmp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2)
    ident = 0x5F0F
    for seq in range(1, 4):
        payload = b"sift pf netns %d" % seq
        head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, checksum(head + payload), ident, seq) + payload
        s.sendto(pkt, (addr, 0))
        deadline = time.time() + 2
        while time.time() < deadline:
            data, _ = s.recvfrom(2048)
            ihl = (data[0] & 15) * 4
            ty, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
            if ty == 0 and rid == ident and rseq == seq:
                break
        else:
            sys.exit("no echo reply %d" % seq)


def client(scenario, addr, port):
    if scenario == "icmp":
        return icmp(addr)
    if scenario == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(3)
        for i in range(3):
            s.sendto(b"datagram %d" % i, (addr, port))
            s.recvfrom(2048)
        return
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.settimeout(15)
    if scenario == "keepalive":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 5)
    c.connect((addr, port))
    if scenario == "bulk":
        c.sendall(bytes(i % 253 for i in range(65536)) * (BULK // 65536))
        c.shutdown(socket.SHUT_WR)
        read_all(c)
    elif scenario == "zerowin":
        c.sendall(b"z" * ZEROWIN)
        c.shutdown(socket.SHUT_WR)
        read_all(c)
    elif scenario == "keepalive":
        c.sendall(b"hello")
        c.recv(100)
        time.sleep(3.3)
    elif scenario == "simclose":
        c.sendall(b"close")
        c.shutdown(socket.SHUT_WR)
        read_all(c)
    elif scenario == "http":
        c.sendall(b"GET / HTTP/1.0\r\nHost: server\r\n\r\n")
        read_all(c)
    else:
        sys.exit("unknown scenario " + scenario)
    c.close()


if __name__ == "__main__":
    role, scenario, addr, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    (server if role == "server" else client)(scenario, addr, port)
