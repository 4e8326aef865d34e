# regress/sys/net/pf_frag frag-overlimit style (set limit frags): at the limit a new fragment
# first frees the least recently used queues down to nine tenths of the fragments
# (pf_flush_fragments), then is kept; the flush may take the fragment's own datagram.
limits frags=4 timeout=60
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=2 off=0 mf=1 fill=A*8 => held
v4 id=3 off=0 mf=1 fill=A*8 => held
v4 id=1 off=16 mf=0 fill=C*8 => held
stats => fragments=4 queues=3
v4 id=4 off=0 mf=1 fill=A*8 => held
stats => fragments=4 queues=3
v4 id=2 off=8 mf=0 fill=B*8 => held
stats => fragments=4 queues=3
v4 id=1 off=8 mf=1 fill=B*8 => held
stats => fragments=3 queues=3
