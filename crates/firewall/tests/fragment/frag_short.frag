# pf_setup_pdesc's checks before reassembly: shorter than the header or its length says
# (PFRES_SHORT); IPv6 with two fragment headers (PFRES_FRAG); not IP.
raw 4500 => dropped short
raw 450000300001200040110000 => dropped short
raw 4600001400012000401100000a0000010a000002 => dropped short
raw 4500001400012000401100000a0000010a000002 => dropped fragment
raw 6000000000102c40fd000000000000000000000000000001fd0000000000000000000000000000022c000001000000012c00000000000001 => dropped fragment
raw 7000 => dropped normalize
