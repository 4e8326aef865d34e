# prog=xdp  r1-r5 are not readable after a call
call 5
mov %r0, %r1
exit
