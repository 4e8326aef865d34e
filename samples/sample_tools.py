#!/usr/bin/env python3
"""Traffic helpers for make-samples.sh: ping, a DNS responder and client, a TCP echo server
and client, and a readiness probe. Standard library only, so the script needs no ping, dig or
nc binaries. Every address comes from the command line; the script passes only addresses of
the network namespaces it creates."""

import os
import socket
import struct
import sys
import time


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ping(addr: str, count: int) -> None:
    """ICMP / ICMPv6 echo like iputils ping: 8-byte timestamp + 0x10.. pattern, 1 s apart."""
    v6 = ":" in addr
    if v6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2.0)
    ident = os.getpid() & 0xFFFF
    for seq in range(1, count + 1):
        now = time.time()
        payload = struct.pack("<QQ", int(now), int((now % 1) * 1e6))[:16] + bytes(range(0x10, 0x10 + 40))
        typ = 128 if v6 else 8
        header = struct.pack("!BBHHH", typ, 0, 0, ident, seq)
        # The kernel fills in the ICMPv6 checksum (it needs the pseudo-header).
        csum = 0 if v6 else checksum(header + payload)
        packet = struct.pack("!BBHHH", typ, 0, csum, ident, seq) + payload
        s.sendto(packet, (addr, 0))
        deadline = time.time() + 2.0
        while time.time() < deadline:
            try:
                data = s.recv(2048)
            except socket.timeout:
                break
            icmp = data if v6 else data[(data[0] & 0x0F) * 4 :]
            want = 129 if v6 else 0
            if icmp[0] == want and struct.unpack("!HH", icmp[4:8]) == (ident, seq):
                print(f"reply from {addr}: seq={seq} time={(time.time() - now) * 1000:.2f} ms")
                break
        if seq != count:
            time.sleep(1.0)


def encode_name(name: str) -> bytes:
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".") if p) + b"\0"


def dns_server(addr: str, answers_v4: str, answers_v6: str, limit: int) -> None:
    """Answers `limit` queries: A and AAAA with the given addresses, NXDOMAIN for *.invalid."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    print("dns server ready", flush=True)
    for _ in range(limit):
        query, peer = s.recvfrom(512)
        qid, _flags, qdcount = struct.unpack("!HHH", query[:6])
        end = 12
        labels = []
        while query[end] != 0:
            n = query[end]
            labels.append(query[end + 1 : end + 1 + n].decode())
            end += n + 1
        qtype, _qclass = struct.unpack("!HH", query[end + 1 : end + 5])
        question = query[12 : end + 5]
        name = ".".join(labels)
        answers = []
        rcode = 0
        if name.endswith(".invalid"):
            rcode = 3
        elif qtype == 1:
            answers = [(1, socket.inet_pton(socket.AF_INET, answers_v4))]
        elif qtype == 28:
            answers = [(28, socket.inet_pton(socket.AF_INET6, answers_v6))]
        header = struct.pack("!HHHHHH", qid, 0x8180 | rcode, qdcount, len(answers), 0, 0)
        body = b"".join(struct.pack("!HHHIH", 0xC00C, t, 1, 300, len(d)) + d for t, d in answers)
        s.sendto(header + question + body, peer)


def dns_query(server: str, name: str, qtype: str) -> None:
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(3.0)
    qid = os.getpid() & 0xFFFF
    t = {"A": 1, "AAAA": 28}[qtype]
    s.sendto(struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + encode_name(name) + struct.pack("!HH", t, 1), (server, 53))
    reply = s.recv(512)
    rcode = struct.unpack("!H", reply[2:4])[0] & 0xF
    ancount = struct.unpack("!H", reply[6:8])[0]
    print(f"{name} {qtype}: rcode {rcode}, {ancount} answer(s)")


def echo_server(addr: str, port: int, connections: int) -> None:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(4)
    print("echo server ready", flush=True)
    for _ in range(connections):
        conn, _ = s.accept()
        with conn:
            while True:
                data = conn.recv(4096)
                if not data:
                    break
                conn.sendall(data)


def echo_client(addr: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.create_connection((addr, port), timeout=5) as c:
        for i, msg in enumerate([b"hello from sift\n", b"x" * 3000, b"bye\n"]):
            c.sendall(msg)
            got = b""
            while len(got) < len(msg):
                got += c.recv(4096)
            assert got == msg, f"echo {i} mismatch"
            time.sleep(0.05)
        c.shutdown(socket.SHUT_WR)
        assert c.recv(10) == b""
    print(f"echo via {family.name} ok")


def wait_tcp(addr: str, port: int) -> None:
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection((addr, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"{addr}:{port} never came up")


def main() -> None:
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "ping":
        ping(args[0], int(args[1]))
    elif cmd == "dns-server":
        dns_server(args[0], args[1], args[2], int(args[3]))
    elif cmd == "dns-query":
        dns_query(args[0], args[1], args[2])
    elif cmd == "echo-server":
        echo_server(args[0], int(args[1]), int(args[2]))
    elif cmd == "echo-client":
        echo_client(args[0], int(args[1]))
    elif cmd == "wait-tcp":
        wait_tcp(args[0], int(args[1]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
