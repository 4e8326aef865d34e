# prog=xdp  the access on the branch where the packet is too short
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 4
mov %r0, 0
jgt %r4, %r3, short
exit
short:
ldxw %r0, [%r2+0]
exit
