# prog=xdp  bytes stored as zero read back as the constant 0, which bounds a packet offset
stw [%r10-4], 0
ldxw %r5, [%r10-4]
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
add %r2, %r5
mov %r4, %r2
add %r4, 1
mov %r0, 0
jgt %r4, %r3, out
ldxb %r0, [%r2+0]
out:
exit
