# regress/sys/net/pf_fragment frag-dropold: the new fragment completely overlaps an old one.
# |----|
#          |XXXX|
#      |------------|
# The older fragment is removed; the new data is used.
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=1 off=16 mf=1 fill=X*8 => held
stats => fragments=2 queues=1
v4 id=1 off=8 mf=0 fill=B*24 => complete len=52 off=0x0
  data A*8 B*24
