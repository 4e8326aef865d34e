# prog=xdp maps=ringbuf:0:0:4096
lddw %r1, map_fd(0)
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stdw [%r0+12], 1
mov %r1, %r0
mov %r2, 0
call 133
out:
mov %r0, 2
exit
