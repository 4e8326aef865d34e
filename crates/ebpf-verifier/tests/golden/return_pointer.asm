# prog=xdp  a pointer returned
mov %r0, %r10
exit
