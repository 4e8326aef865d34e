# prog=tc maps=hash:4:8:16
stw [%r10-4], 1
stdw [%r10-16], 5
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, 0
call 2
mov %r0, 0
exit
