# prog=xdp  4 bytes written, 8 read
stw [%r10-8], 1
ldxdw %r0, [%r10-8]
exit
