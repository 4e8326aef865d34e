# prog=xdp  a function reading the caller's stack through a pointer
stdw [%r10-8], 3
mov %r1, %r10
add %r1, -8
call local f
exit
f:
ldxdw %r0, [%r1+0]
add %r0, 1
exit
