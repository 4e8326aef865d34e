# prog=tc
mov %r2, 7
stxw [%r1+8], %r2
stxw [%r1+32], %r2
mov %r0, 0
exit
