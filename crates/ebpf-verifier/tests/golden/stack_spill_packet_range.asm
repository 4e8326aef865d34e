# prog=xdp  a packet pointer spilled before its check gets the range too
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
stxdw [%r10-8], %r2
mov %r4, %r2
add %r4, 4
mov %r0, 2
jgt %r4, %r3, out
ldxdw %r5, [%r10-8]
ldxw %r0, [%r5+0]
out:
exit
