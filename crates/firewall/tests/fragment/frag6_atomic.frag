# regress/sys/net/pf_frag (frag6-atomic style): an IPv6 fragment header with offset 0 and no
# more fragments is an atomic fragment (RFC 6946): not reassembled, it passes as it is, and
# an open queue with the same id is not touched.
v6 id=3 off=0 mf=0 fill=A*16 => not-fragment
v6 id=4 off=8 mf=0 fill=B*8 => held
v6 id=4 off=0 mf=0 fill=A*8 => not-fragment
stats => fragments=1 queues=1
v6 id=4 off=0 mf=1 fill=A*8 => complete len=56 hdrlen=40 nh=17 maxlen=8 id=4
  data A*8 B*8
