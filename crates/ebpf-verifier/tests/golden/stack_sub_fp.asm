# prog=xdp  subtracting from the frame pointer
mov %r2, %r10
sub %r2, 8
stdw [%r2+0], 0
mov %r0, 0
exit
