# prog=xdp
mov %r0, 1
lsh32 %r0, 32
exit
