# regress/sys/net/pf_fragment frag6-cutold: as frag-cutold, over IPv6: the queue is freed.
v6 id=1 off=8 mf=0 fill=X*8+B*8 => held
v6 id=1 off=0 mf=1 fill=A*16 => dropped fragment
stats => fragments=0 queues=0
