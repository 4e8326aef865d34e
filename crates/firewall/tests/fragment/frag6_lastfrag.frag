# As frag_lastfrag over IPv6, where each violation frees the whole queue.
v6 id=1 off=8 mf=1 fill=A*8 => held
v6 id=1 off=16 mf=0 fill=B*8 => held
v6 id=1 off=16 mf=0 fill=B*16 => dropped fragment
stats => fragments=0 queues=0
v6 id=2 off=8 mf=1 fill=A*8 => held
v6 id=2 off=16 mf=0 fill=B*8 => held
v6 id=2 off=24 mf=1 fill=C*8 => dropped fragment
stats => fragments=0 queues=0
v6 id=3 off=8 mf=1 fill=A*8 => held
v6 id=3 off=16 mf=0 fill=B*8 => held
v6 id=3 off=16 mf=1 fill=B*8 => dropped fragment
stats => fragments=0 queues=0
v6 id=4 off=8 mf=1 fill=A*8 => held
v6 id=4 off=16 mf=0 fill=B*8 => held
v6 id=4 off=8 mf=0 fill=A*8 => dropped fragment
stats => fragments=0 queues=0
v6 id=5 off=0 mf=1 fill=A*16 => held
v6 id=5 off=8 mf=0 fill=B*8 => dropped fragment
stats => fragments=0 queues=0
