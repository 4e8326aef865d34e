# prog=xdp maps=hash:4:8:16  the key is never written
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
mov %r0, 2
exit
