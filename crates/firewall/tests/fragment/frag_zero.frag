# pf_fillup_fragment "bad fragment: len 0": zero-length fragments are refused alone.
v4 id=1 off=0 mf=1 fill=A*8 => held
v4 id=1 off=8 mf=1 => dropped fragment
v6 id=1 off=8 mf=1 => dropped fragment
v6 id=1 off=0 mf=1 fill=A*8 => held
v6 id=1 off=8 mf=0 => dropped fragment
stats => fragments=2 queues=2
