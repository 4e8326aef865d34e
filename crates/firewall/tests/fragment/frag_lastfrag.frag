# regress/sys/net/pf_frag frag-mf style: the rules on the last fragment. IPv4 refuses the
# fragment alone: a second last fragment with another end, a fragment past the last one, a
# fragment ending with the last one that says more follow, a last fragment ending before data
# already seen, and (id 2) a last fragment ending where unfinished data ends.
v4 id=1 off=8 mf=1 fill=A*8 => held
v4 id=1 off=16 mf=0 fill=B*8 => held
v4 id=1 off=16 mf=0 fill=B*16 => dropped fragment
v4 id=1 off=24 mf=1 fill=C*8 => dropped fragment
v4 id=1 off=16 mf=1 fill=B*8 => dropped fragment
v4 id=1 off=8 mf=0 fill=A*8 => dropped fragment
stats => fragments=2 queues=1
v4 id=1 off=0 mf=1 fill=A*8 => complete len=44 off=0x0
  data A*16 B*8
v4 id=2 off=0 mf=1 fill=A*16 => held
v4 id=2 off=8 mf=0 fill=B*8 => dropped fragment
v4 id=2 off=16 mf=0 fill=B*8 => complete len=44 off=0x0
  data A*16 B*8
