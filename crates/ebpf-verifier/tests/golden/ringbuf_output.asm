# prog=xdp maps=ringbuf:0:0:4096
stdw [%r10-8], 42
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -8
mov %r3, 8
mov %r4, 0
call 130
mov %r0, 2
exit
