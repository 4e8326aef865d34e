# prog=xdp maps=array:4:64:4  an unchecked random index
stw [%r10-4], 0
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
add %r6, %r0
ldxb %r0, [%r6+0]
exit
out:
mov %r0, 2
exit
