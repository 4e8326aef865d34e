# prog=tc  csum_diff with a null first buffer of size 0
stdw [%r10-8], 0
mov %r1, 0
mov %r2, 0
mov %r3, %r10
add %r3, -8
mov %r4, 8
mov %r5, 0
call 28
exit
