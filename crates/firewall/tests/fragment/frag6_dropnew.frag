# regress/sys/net/pf_fragment frag6-dropnew: as frag-dropnew, over IPv6: the covered
# fragment frees the queue, and the first fragment then starts a new one that stays incomplete.
v6 id=1 off=8 mf=0 fill=B*24 => held
v6 id=1 off=16 mf=1 fill=X*8 => dropped fragment
stats => fragments=0 queues=0
v6 id=1 off=0 mf=1 fill=A*8 => held
stats => fragments=1 queues=1
