# set reassemble yes no-df: DF is cleared on fragments, which are reassembled.
nodf
v4 id=1 off=0 mf=1 df=1 fill=A*8 => held
v4 id=1 off=8 mf=0 df=1 fill=B*8 => complete len=36 off=0x0
  data A*8 B*8
