# prog=xdp  ingress_ifindex, rx_queue_index and egress_ifindex are numbers
ldxw %r2, [%r1+12]
ldxw %r3, [%r1+16]
ldxw %r4, [%r1+20]
mov %r0, %r2
add %r0, %r3
add %r0, %r4
exit
