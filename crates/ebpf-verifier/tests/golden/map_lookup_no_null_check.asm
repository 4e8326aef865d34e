# prog=xdp maps=hash:4:8:16
stw [%r10-4], 7
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
ldxdw %r0, [%r0+0]
exit
