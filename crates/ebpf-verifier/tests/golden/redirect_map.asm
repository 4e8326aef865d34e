# prog=xdp maps=devmap:4:4:4
lddw %r1, map_fd(0)
mov %r2, 0
mov %r3, 0
call 51
exit
