# prog=xdp  `if ptr < end` proves one byte past ptr
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 3
mov %r0, 0
jlt %r4, %r3, ok
exit
ok:
ldxw %r0, [%r2+0]
exit
