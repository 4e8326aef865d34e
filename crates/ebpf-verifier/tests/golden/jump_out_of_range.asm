# prog=xdp
ja +5
mov %r0, 0
exit
