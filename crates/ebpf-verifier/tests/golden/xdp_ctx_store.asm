# prog=xdp  xdp_md is read-only
mov %r2, 0
stxw [%r1+12], %r2
mov %r0, 2
exit
