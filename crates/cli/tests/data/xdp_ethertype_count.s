# Count packets by EtherType (hash map 0); drop IPv6, pass the rest.
ldxw %r2, [%r1+0]          # data
ldxw %r3, [%r1+4]          # data_end
mov %r4, %r2
add %r4, 14
jgt %r4, %r3, pass         # shorter than an Ethernet header
ldxh %r6, [%r2+12]
be16 %r6
stxw [%r10-4], %r6
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1                     # map_lookup_elem
jeq %r0, 0, new
mov %r1, 1
lock add [%r0], %r1
ja verdict
new:
stdw [%r10-16], 1
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, 0
call 2                     # map_update_elem
verdict:
mov %r0, 1
jeq %r6, 0x86dd, out
pass:
mov %r0, 2
out:
exit
