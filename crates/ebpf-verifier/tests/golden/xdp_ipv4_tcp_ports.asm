# prog=xdp  Ethernet, IPv4 with a variable header length, TCP destination port 80 dropped
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r0, 2
mov %r4, %r2
add %r4, 34
jgt %r4, %r3, out
ldxh %r5, [%r2+12]
jne %r5, 0x0008, out
ldxb %r5, [%r2+23]
jne %r5, 6, out
ldxb %r5, [%r2+14]
and %r5, 15
lsh %r5, 2
jlt %r5, 20, out
mov %r4, %r2
add %r4, 14
add %r4, %r5
mov %r5, %r4
add %r5, 20
jgt %r5, %r3, out
ldxh %r5, [%r4+2]
jne %r5, 0x5000, out
mov %r0, 1
out:
exit
