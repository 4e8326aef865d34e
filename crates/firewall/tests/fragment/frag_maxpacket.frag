# regress/sys/net/pf_frag frag-maxpacket style: data past 65,535 octets is refused
# ("bad fragment: max packet"); a datagram whose header and data pass 65,535 is dropped
# as short when it completes ("drop: too big").
v4 id=1 off=65528 mf=0 fill=Z*16 => dropped fragment
v6 id=1 off=65528 mf=0 fill=Z*16 => dropped fragment
v4 id=2 off=0 mf=1 fill=A*65512 => held
v4 id=2 off=65512 mf=0 fill=B*16 => dropped short
stats => fragments=0 queues=0
v6 id=2 off=0 mf=1 hop=1 fill=A*65480 => held
v6 id=2 off=65480 mf=0 hop=1 fill=B*48 => dropped short
stats => fragments=0 queues=0
v6 id=3 off=0 mf=1 fill=A*65480 => held
v6 id=3 off=65480 mf=0 fill=B*48 => complete len=65568 hdrlen=40 nh=17 maxlen=65480 id=3
  data A*65480 B*48
