# prog=socket  socket filters have no data/data_end
ldxw %r2, [%r1+76]
mov %r0, 0
exit
