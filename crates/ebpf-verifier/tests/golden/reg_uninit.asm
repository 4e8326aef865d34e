# prog=xdp
mov %r0, %r5
exit
