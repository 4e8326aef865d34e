# prog=xdp  `if end >= ptr` form (pkt_end on the left), the range in the taken branch
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 4
mov %r0, 0
jge %r3, %r4, ok
exit
ok:
ldxw %r0, [%r2+0]
exit
