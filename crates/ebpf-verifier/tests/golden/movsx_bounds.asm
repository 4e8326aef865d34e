# prog=xdp maps=array:4:256:1  movsx of a byte: -128..127, offset by 128
ldxw %r6, [%r1+12]
movsx864 %r6, %r6
add %r6, 128
lddw %r1, map_value(0, 0)
add %r1, %r6
ldxb %r0, [%r1+0]
exit
