# prog=xdp
mov %r0, 0
exit
mov %r0, 1
exit
