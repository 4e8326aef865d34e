# prog=xdp
ja +1
lddw %r0, 5
exit
