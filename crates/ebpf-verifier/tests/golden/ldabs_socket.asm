# prog=socket  legacy packet loads: r6 the skb
mov %r6, %r1
ldabsh 12
mov %r7, %r0
ldabsb 23
add %r0, %r7
exit
