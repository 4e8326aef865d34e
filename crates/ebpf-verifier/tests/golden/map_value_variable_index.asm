# prog=xdp maps=array:4:64:4  an index masked to 0..7, scaled by 8: within the 64-byte value
stw [%r10-4], 0
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
call 7
and %r0, 7
lsh %r0, 3
mov %r6, %r0
stw [%r10-4], 0
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
add %r0, %r6
ldxdw %r0, [%r0+0]
exit
out:
mov %r0, 2
exit
