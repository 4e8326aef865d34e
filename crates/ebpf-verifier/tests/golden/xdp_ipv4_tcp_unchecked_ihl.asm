# prog=xdp  the TCP header at a variable offset read without its own check
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r0, 2
mov %r4, %r2
add %r4, 54
jgt %r4, %r3, out
ldxb %r5, [%r2+14]
and %r5, 15
lsh %r5, 2
mov %r4, %r2
add %r4, 14
add %r4, %r5
ldxh %r0, [%r4+2]
out:
exit
