# prog=xdp  atomic add and fetch on the stack
stdw [%r10-8], 1
mov %r1, 2
lock fetch add [%r10-8], %r1
ldxdw %r0, [%r10-8]
add %r0, %r1
exit
