# prog=xdp  a loop over constants that runs 2^32 times (found by fuzzing): the budget ends it
mov32 %r0, -452984832
loop:
sub32 %r0, 905969700
jge %r0, 339, +0
jset32 %r0, 335544380, loop
mov %r0, 0
exit
