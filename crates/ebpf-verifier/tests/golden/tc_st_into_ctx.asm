# prog=tc  an immediate store into the context
stw [%r1+8], 7
mov %r0, 0
exit
