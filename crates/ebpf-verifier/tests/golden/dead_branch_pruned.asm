# prog=xdp  a branch that cannot be taken is not explored
mov %r1, 5
mov %r0, 0
jgt %r1, 10, bad
exit
bad:
ldxdw %r0, [%r10-8]
exit
