# prog=xdp maps=array:4:256:1  an index that may be negative (-16..239)
ldxw %r6, [%r1+12]
and %r6, 255
sub %r6, 16
lddw %r1, map_value(0, 0)
add %r1, %r6
ldxb %r0, [%r1+0]
exit
