# prog=xdp  packet pointers from before xdp_adjust_head are gone
ldxw %r2, [%r1+0]
ldxw %r3, [%r1+4]
mov %r4, %r2
add %r4, 14
mov %r0, 2
jgt %r4, %r3, out
mov %r6, %r2
mov %r2, 4
call 44
ldxb %r0, [%r6+0]
out:
exit
