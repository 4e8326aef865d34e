# regress/sys/net/pf_fragment frag6 and fragping6: an IPv6 datagram in three fragments, the
# last first; the largest fragment's length is kept for refragmentation.
v6 id=305419896 off=2464 mf=0 fill=C*500 => held
v6 id=305419896 off=0 mf=1 fill=A*1232 => held
v6 id=305419896 off=1232 mf=1 fill=B*1232 => complete len=3004 hdrlen=40 nh=17 maxlen=1232 id=305419896
  data A*1232 B*1232 C*500
