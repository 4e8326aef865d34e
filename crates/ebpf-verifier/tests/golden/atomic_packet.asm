# prog=xdp
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 8
mov %r0, 2
jgt %r4, %r3, out
mov %r5, 1
lock add [%r2+0], %r5
out:
exit
