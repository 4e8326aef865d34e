# prog=xdp
mov %r0, 2
exit
