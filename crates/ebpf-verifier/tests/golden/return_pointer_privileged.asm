# prog=xdp privileged  a pointer returned by a privileged loader
mov %r0, %r10
exit
