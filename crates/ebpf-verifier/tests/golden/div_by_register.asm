# prog=xdp  division by a register that may be zero is fine
ldxw %r2, [%r1+12]
mov %r0, 100
div %r0, %r2
mod %r0, %r2
exit
