# prog=xdp
call runtime 7
mov %r0, 0
exit
