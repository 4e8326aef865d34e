# pf_fillup_fragment "bad fragment: mff and len": a fragment followed by more must carry a
# multiple of 8 octets; the last one need not.
v4 id=1 off=0 mf=1 fill=A*12 => dropped fragment
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=1 off=8 mf=0 fill=B*5 => complete len=33 off=0x0
  data A*8 B*5
v6 id=1 off=0 mf=1 fill=A*9 => dropped fragment
