# regress/sys/net/pf_fragment frag-dropnew: old fragments completely overlap the new one.
#      |------------|
#          |XXXX|
# |----|
# The new fragment is dropped (pf sets no reason: pflog says match); the queue stays.
v4 id=1 off=8 mf=0 fill=B*24 => held
v4 id=1 off=16 mf=1 fill=X*8 => dropped match
stats => fragments=1 queues=1
v4 id=1 off=0 mf=1 fill=A*8 => complete len=52 off=0x0
  data A*8 B*24
