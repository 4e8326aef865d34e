# Keys: IPv4 fragments with the same id but another protocol or source are other datagrams;
# IPv6 fragments are keyed without the protocol (later fragments do not carry it).
v4 id=1 off=0 mf=1 proto=17 fill=A*8 => held
v4 id=1 off=8 mf=0 proto=6 fill=B*8 => held
v4 id=1 off=8 mf=0 proto=17 src=5 fill=B*8 => held
stats => fragments=3 queues=3
v4 id=1 off=8 mf=0 proto=17 fill=B*8 => complete len=36 off=0x0
  data A*8 B*8
v6 id=1 off=0 mf=1 nh=17 fill=A*8 => held
v6 id=1 off=8 mf=0 nh=6 fill=B*8 => complete len=56 hdrlen=40 nh=17 maxlen=8 id=1
  data A*8 B*8
