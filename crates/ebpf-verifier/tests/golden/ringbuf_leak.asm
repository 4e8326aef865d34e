# prog=xdp maps=ringbuf:0:0:4096  the reservation is never submitted
lddw %r1, map_fd(0)
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stdw [%r0+8], 1
out:
mov %r0, 2
exit
