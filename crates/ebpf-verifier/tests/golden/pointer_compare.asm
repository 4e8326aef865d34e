# prog=xdp  comparing two stack pointers
mov %r2, %r10
mov %r0, 0
jeq %r2, %r10, out
mov %r0, 1
out:
exit
