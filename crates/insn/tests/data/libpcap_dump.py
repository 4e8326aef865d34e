#!/usr/bin/env python3
"""Prints a program the way libpcap's own bpf_dump() does, for making expected files.

Usage: libpcap_dump.py OPTION < PROGRAM.ddd   (OPTION 1 = -d, 2 = -dd, 3 = -ddd)

PROGRAM.ddd is tcpdump's -ddd form (count line, then `code jt jf k` lines). This calls the
system libpcap (libpcap.so.0.8) through ctypes, so the output is exactly what `tcpdump -d`,
`-dd` and `-ddd` print with that libpcap. The golden files NAME.d/.dd/.ddd beside NAME.prog were
made with:  python3 libpcap_dump.py 1 < NAME.prog > NAME.d   (and 2, 3), libpcap 1.10.3.
"""
import ctypes, sys

class Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint), ("insns", ctypes.POINTER(Insn))]

lines = [l.split() for l in sys.stdin.read().splitlines() if l.strip()]
count = int(lines[0][0])
insns = (Insn * count)(*[Insn(int(c), int(jt), int(jf), int(k)) for c, jt, jf, k in lines[1:]])
lib = ctypes.CDLL("libpcap.so.0.8")
libc = ctypes.CDLL(None)
sys.stdout.flush()
lib.bpf_dump(ctypes.byref(Prog(count, insns)), int(sys.argv[1]))
libc.fflush(None)
