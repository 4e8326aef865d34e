# prog=xdp  a loop of 16 iterations, proven to end by exploring it
mov %r0, 0
mov %r1, 0
loop:
add %r0, %r1
add %r1, 1
jlt %r1, 16, loop
exit
