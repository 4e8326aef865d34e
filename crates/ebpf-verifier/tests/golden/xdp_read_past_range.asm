# prog=xdp  14 bytes proven, 2 read at 13
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 14
mov %r0, 2
jgt %r4, %r3, out
ldxh %r0, [%r2+13]
out:
exit
