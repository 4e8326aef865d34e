# prog=xdp
stdw [%r10-12], 0
mov %r0, 0
exit
