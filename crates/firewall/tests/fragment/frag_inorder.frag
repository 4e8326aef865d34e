# regress/sys/net/pf_fragment frag and fragping: a datagram in fragments, in order, and one
# in reverse order; the first fragment's header is kept.
v4 id=1 off=0 mf=1 fill=A*1480 => held
v4 id=1 off=1480 mf=1 fill=B*1480 => held
v4 id=1 off=2960 mf=0 fill=C*1048 => complete len=4028 off=0x0
  data A*1480 B*1480 C*1048
v4 id=2 off=2960 mf=0 fill=C*1048 => held
v4 id=2 off=1480 mf=1 fill=B*1480 => held
v4 id=2 off=0 mf=1 fill=A*1480 => complete len=4028 off=0x0
  data A*1480 B*1480 C*1048
