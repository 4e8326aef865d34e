# prog=xdp maps=prog_array:4:4:4
lddw %r2, map_fd(0)
mov %r3, 0
call 12
mov %r0, 2
exit
