# prog=xdp
stdw [%r10-520], 0
mov %r0, 0
exit
