# prog=xdp  the EtherType read without a check: the kernel's packet message
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r0, 2
add %r2, 14
ldxh %r0, [%r2-2]
exit
