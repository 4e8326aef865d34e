# prog=tc  skb_load_bytes fills uninitialised stack
mov %r2, 12
mov %r3, %r10
add %r3, -8
mov %r4, 8
call 26
ldxdw %r0, [%r10-8]
exit
