# prog=xdp  arithmetic on pkt_end
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
add %r3, -14
mov %r0, 2
exit
