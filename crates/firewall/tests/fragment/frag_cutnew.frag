# regress/sys/net/pf_fragment frag-cutnew: the start of the new fragment overlaps the old one.
# |--------|
#     |>>>>>----|
# The older data wins at the new fragment's front: its first 8 octets (X) are cut.
v4 id=1 off=0 mf=1 fill=A*16 => held
v4 id=1 off=8 mf=0 fill=X*8+B*8 => complete len=44 off=0x0
  data A*16 B*8
