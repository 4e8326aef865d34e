# prog=xdp
mov %r0, 0
loop:
ja loop
