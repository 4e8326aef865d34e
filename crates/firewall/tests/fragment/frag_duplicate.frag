# Duplicates: IPv4 drops the second copy and keeps the queue; IPv6 (RFC 5722) treats it as an
# overlap and frees the datagram.
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=1 off=0 mf=1 fill=A*8 => dropped match
v4 id=1 off=8 mf=0 fill=B*8 => complete len=36 off=0x0
  data A*8 B*8
v6 id=1 off=0 mf=1 fill=A*8 => held
v6 id=1 off=0 mf=1 fill=A*8 => dropped fragment
v6 id=1 off=8 mf=0 fill=B*8 => held
stats => fragments=1 queues=1
