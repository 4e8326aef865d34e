# prog=xdp
mov %r0, 100
div %r0, 0
exit
