# prog=xdp
ldxdw %r0, [%r10-16]
exit
