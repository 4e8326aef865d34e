# prog=xdp maps=array:4:16:1
lddw %r1, map_value(0, 0)
mov %r2, 1
lock add [%r1+4], %r2
mov %r0, 2
exit
