# prog=xdp
mov %r0, 0
