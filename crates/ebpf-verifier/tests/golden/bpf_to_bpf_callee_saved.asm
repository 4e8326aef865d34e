# prog=xdp  r6 survives the call, r1 does not
mov %r6, 5
call local f
mov %r0, %r6
mov %r0, %r1
exit
f:
mov %r0, 0
exit
