# prog=xdp  a 32-bit bound on a packet offset
ldxw %r6, [%r1+12]
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r0, 0
jgt32 %r6, 7, out
mov32 %r6, %r6
add %r2, %r6
mov %r4, %r2
add %r4, 2
jgt %r4, %r3, out
ldxh %r0, [%r2+0]
out:
exit
