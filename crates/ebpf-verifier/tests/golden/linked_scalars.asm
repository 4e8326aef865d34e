# prog=xdp maps=array:4:16:1  a copy's bound applies to the original
ldxw %r6, [%r1+12]
mov %r7, %r6
lddw %r1, map_value(0, 0)
mov %r0, 2
jgt %r7, 15, out
add %r1, %r6
ldxb %r0, [%r1+0]
out:
exit
