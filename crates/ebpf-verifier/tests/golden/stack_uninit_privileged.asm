# prog=xdp privileged  a privileged loader may read stack never written (an unknown number)
ldxdw %r0, [%r10-16]
exit
