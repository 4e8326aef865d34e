# prog=xdp  a bounded loop summing the first 8 bytes, each checked against data_end
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r0, 0
mov %r6, 0
loop:
mov %r4, %r2
add %r4, 1
jgt %r4, %r3, out
ldxb %r5, [%r2+0]
add %r0, %r5
mov %r2, %r4
add %r6, 1
jlt %r6, 8, loop
out:
exit
