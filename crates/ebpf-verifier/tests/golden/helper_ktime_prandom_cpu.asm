# prog=xdp
call 5
mov %r6, %r0
call 7
add %r6, %r0
call 8
add %r0, %r6
exit
