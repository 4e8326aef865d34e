# prog=tc
mov %r6, 0
ldabsh 12
exit
