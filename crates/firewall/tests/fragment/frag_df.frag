# pf_normalize_ip: a fragment with DF set is refused ("bad fragment: IP_DF") unless
# set reassemble yes no-df, which clears DF; the complete datagram keeps no flag.
v4 id=1 off=0 mf=1 df=1 fill=A*8 => dropped fragment
v4 id=1 off=0 mf=0 df=1 fill=A*8 => not-fragment
