# PF_FRAG_STALE: with a frag timeout of 1 s, a queue whose source, destination and protocol
# have since opened 200 newer queues is stale; its next fragment frees it and starts anew.
limits timeout=1
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=2..199 off=0 mf=1 fill=A*8 => held x198
v4 id=1 off=16 mf=1 fill=A*8 => held
stats => fragments=200 queues=199
v4 id=200 off=0 mf=1 fill=A*8 => held
v4 id=1 off=8 mf=0 fill=B*8 => held
stats => fragments=200 queues=200
# Another source's queues do not count: its node has its own generations.
v4 id=1 off=0 mf=1 src=9 fill=A*8 => held
v4 id=300..700 off=0 mf=1 src=8 fill=A*8 => held x401
v4 id=1 off=8 mf=0 src=9 fill=B*8 => complete len=36 off=0x0
  data A*8 B*8
