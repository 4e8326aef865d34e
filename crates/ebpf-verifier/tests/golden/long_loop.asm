# prog=xdp  10,000 iterations: within the budget
mov %r0, 0
mov %r1, 0
loop:
add %r0, %r1
add %r1, 1
jlt %r1, 10000, loop
exit
