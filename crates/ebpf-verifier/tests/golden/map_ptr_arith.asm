# prog=xdp maps=hash:4:8:16
lddw %r1, map_fd(0)
add %r1, 8
mov %r0, 2
exit
