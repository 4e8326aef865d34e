# prog=xdp maps=array:4:16:1  a signed upper bound alone leaves negative indexes
ldxw %r6, [%r1+12]
lsh %r6, 32
arsh %r6, 32
lddw %r1, map_value(0, 0)
jsgt %r6, 8, out
add %r1, %r6
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 2
exit
