# prog=xdp maps=array:4:8:1:128  BPF_F_RDONLY_PROG
lddw %r1, map_value(0, 0)
stdw [%r1+0], 1
mov %r0, 2
exit
