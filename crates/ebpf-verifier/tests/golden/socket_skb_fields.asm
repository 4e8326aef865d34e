# prog=socket  len, protocol and a cb[] word written and read back
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+16]
stxw [%r1+48], %r2
ldxw %r0, [%r1+48]
add %r0, %r3
exit
