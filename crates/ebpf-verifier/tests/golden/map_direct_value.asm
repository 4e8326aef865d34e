# prog=xdp maps=array:4:16:1  a global variable through lddw map_value
lddw %r1, map_value(0, 8)
ldxdw %r0, [%r1+0]
add %r0, 1
stxdw [%r1+0], %r0
mov %r0, 2
exit
