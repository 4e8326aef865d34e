# prog=xdp maps=array:4:8:1 privileged  one store through a stack pointer on one path and a map value on the other (its access base is Mixed)
stw [%r10-4], 0
mov %r6, %r1
lddw %r1, map_fd(0)
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r7, %r10
add %r7, -8
ldxw %r8, [%r6+12]
jeq %r8, 0, store
mov %r7, %r0
store:
stw [%r7+0], 1
out:
mov %r0, 2
exit
