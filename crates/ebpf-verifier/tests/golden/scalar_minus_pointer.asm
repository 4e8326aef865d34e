# prog=xdp
mov %r2, 0
sub %r2, %r10
mov %r0, 0
exit
