# prog=xdp  metadata proven against data
ldxw %r2, [%r1+8]
ldxw %r3, [%r1+0]
mov %r4, %r2
add %r4, 4
mov %r0, 2
jgt %r4, %r3, out
ldxw %r0, [%r2+0]
out:
exit
