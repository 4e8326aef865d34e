# prog=xdp maps=hash:4:8:16  a copy of the lookup result is checked too
stw [%r10-4], 7
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
mov %r6, %r0
jeq %r0, 0, out
ldxdw %r0, [%r6+0]
exit
out:
mov %r0, 2
exit
