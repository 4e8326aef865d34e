# prog=xdp  a spilled context pointer comes back a context pointer
stxdw [%r10-8], %r1
ldxdw %r2, [%r10-8]
ldxw %r0, [%r2+12]
exit
