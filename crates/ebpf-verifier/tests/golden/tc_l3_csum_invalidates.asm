# prog=tc  l3_csum_replace may move the packet
ldxw %r2, [%r1+76]
ldxw %r3, [%r1+80]
mov %r4, %r2
add %r4, 14
mov %r0, 0
jgt %r4, %r3, out
mov %r7, %r2
mov %r2, 0
mov %r3, 0
mov %r4, 0
mov %r5, 2
call 10
ldxb %r0, [%r7+0]
out:
exit
