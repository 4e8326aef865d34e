# regress/sys/net/pf_fragment frag6-dropold: as frag-dropold, over IPv6: no reply.
v6 id=1 off=0 mf=1 fill=A*8 => held
v6 id=1 off=16 mf=1 fill=X*8 => held
v6 id=1 off=8 mf=0 fill=B*24 => dropped fragment
stats => fragments=0 queues=0
