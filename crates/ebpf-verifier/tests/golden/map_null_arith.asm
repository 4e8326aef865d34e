# prog=xdp maps=hash:4:8:16  arithmetic before the null check
stw [%r10-4], 7
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
add %r0, 4
mov %r0, 2
exit
