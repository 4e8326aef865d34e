# prog=xdp maps=array:4:8:4  an array element at a constant index in range is never null
stw [%r10-4], 0
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
ldxdw %r0, [%r0+0]
exit
