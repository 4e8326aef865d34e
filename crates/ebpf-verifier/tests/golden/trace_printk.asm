# prog=xdp  the format string on the stack
stw [%r10-8], 0x6968
stw [%r10-4], 0
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
mov %r4, 0
mov %r5, 0
call 6
mov %r0, 2
exit
