# prog=xdp  xdp_md fields are read 4 bytes at a time
ldxh %r0, [%r1+12]
exit
