# prog=xdp maps=array:4:8:1  a counter
lddw %r1, map_value(0, 0)
mov %r2, 1
lock add [%r1+0], %r2
mov %r0, 2
exit
