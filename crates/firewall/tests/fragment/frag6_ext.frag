# regress/sys/net/pf_fragment frag6-ext: two fragments behind a hop-by-hop header. The
# reassembled datagram keeps the hop-by-hop header, whose next header becomes ICMPv6 (58).
v6 id=7 off=0 mf=1 nh=58 hop=1 fill=A*16 => held
v6 id=7 off=16 mf=0 nh=58 hop=1 fill=B*8 => complete len=72 hdrlen=48 nh=58 maxlen=16 id=7
  data A*16 B*8
