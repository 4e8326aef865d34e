# prog=xdp  a number where a map is expected
mov %r1, 0
mov %r2, %r10
add %r2, -8
stdw [%r10-8], 0
call 1
mov %r0, 2
exit
