# regress/sys/net/pf_fragment frag6-cutnew: as frag-cutnew, over IPv6.
# RFC 5722: any overlap drops the whole datagram, so no echo reply comes back.
v6 id=1 off=0 mf=1 fill=A*16 => held
v6 id=1 off=8 mf=0 fill=X*8+B*8 => dropped fragment
stats => fragments=0 queues=0
