# prog=xdp maps=array:4:8:4
stw [%r10-4], 1
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r0, [%r0+4]
exit
out:
mov %r0, 2
exit
