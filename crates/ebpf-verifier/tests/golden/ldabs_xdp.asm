# prog=xdp
mov %r6, %r1
ldabsh 12
exit
