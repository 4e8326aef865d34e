# prog=tc  data/data_end in __sk_buff, a write into the packet
ldxw %r2, [%r1+76]
ldxw %r3, [%r1+80]
mov %r4, %r2
add %r4, 14
mov %r0, 0
jgt %r4, %r3, out
stb [%r2+0], 0xff
ldxh %r0, [%r2+12]
out:
exit
