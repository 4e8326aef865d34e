# prog=xdp  an Ethernet header proven against data_end, then the EtherType read
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 14
mov %r0, 2
jgt %r4, %r3, out
ldxh %r0, [%r2+12]
out:
exit
