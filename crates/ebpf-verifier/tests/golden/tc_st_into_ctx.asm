# prog=tc  an immediate store into a writable context field (allowed since Linux 6.2)
stw [%r1+8], 7
mov %r0, 0
exit
