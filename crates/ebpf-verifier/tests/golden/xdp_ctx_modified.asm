# prog=xdp  a moved context pointer is not dereferenced
add %r1, 4
ldxw %r0, [%r1+0]
exit
