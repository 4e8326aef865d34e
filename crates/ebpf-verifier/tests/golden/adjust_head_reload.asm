# prog=xdp  data reloaded after xdp_adjust_head and checked again
mov %r6, %r1
mov %r2, 4
call 44
ldxw %r2, [%r6+0]
ldxw %r3, [%r6+4]
mov %r4, %r2
add %r4, 1
mov %r0, 2
jgt %r4, %r3, out
ldxb %r0, [%r2+0]
out:
exit
