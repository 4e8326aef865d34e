# prog=xdp
ldxw %r0, [%r1+24]
exit
