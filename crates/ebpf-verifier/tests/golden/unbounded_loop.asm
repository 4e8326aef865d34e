# prog=xdp  a counter that never reaches its bound: the processed-instruction budget
mov %r0, 0
mov %r1, 1
loop:
add %r0, 1
jgt %r1, 0, loop
exit
