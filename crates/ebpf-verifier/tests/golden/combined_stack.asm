# prog=xdp  512 bytes in the caller, 16 in the callee
stdw [%r10-512], 0
call local f
exit
f:
stdw [%r10-16], 0
mov %r0, 0
exit
