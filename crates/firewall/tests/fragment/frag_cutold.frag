# regress/sys/net/pf_fragment frag-cutold: the end of the new fragment overlaps the old one.
#     |>>>>>----|
# |--------|
# The new data wins at its back: the older fragment loses its first 8 octets (X).
v4 id=1 off=8 mf=0 fill=X*8+B*8 => held
v4 id=1 off=0 mf=1 fill=A*16 => complete len=44 off=0x0
  data A*16 B*8
