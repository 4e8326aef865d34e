# prog=xdp
mov %r10, 0
mov %r0, 0
exit
