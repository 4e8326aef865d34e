# regress/sys/net/pf_frag frag-queuelimit style: each 4,096-octet stretch of a datagram holds
# at most PF_FRAG_ENTRY_LIMIT (64) fragments; the 65th frees the queue ("fragment queue
# limit exceeded").
v4 id=1 off=8 mf=1 fill=A*8 => held
v4 id=1 off=24 mf=1 fill=A*8 => held
v4 id=1 off=40 mf=1 fill=A*8 => held
v4 id=1 off=56 mf=1 fill=A*8 => held
v4 id=1 off=72 mf=1 fill=A*8 => held
v4 id=1 off=88 mf=1 fill=A*8 => held
v4 id=1 off=104 mf=1 fill=A*8 => held
v4 id=1 off=120 mf=1 fill=A*8 => held
v4 id=1 off=136 mf=1 fill=A*8 => held
v4 id=1 off=152 mf=1 fill=A*8 => held
v4 id=1 off=168 mf=1 fill=A*8 => held
v4 id=1 off=184 mf=1 fill=A*8 => held
v4 id=1 off=200 mf=1 fill=A*8 => held
v4 id=1 off=216 mf=1 fill=A*8 => held
v4 id=1 off=232 mf=1 fill=A*8 => held
v4 id=1 off=248 mf=1 fill=A*8 => held
v4 id=1 off=264 mf=1 fill=A*8 => held
v4 id=1 off=280 mf=1 fill=A*8 => held
v4 id=1 off=296 mf=1 fill=A*8 => held
v4 id=1 off=312 mf=1 fill=A*8 => held
v4 id=1 off=328 mf=1 fill=A*8 => held
v4 id=1 off=344 mf=1 fill=A*8 => held
v4 id=1 off=360 mf=1 fill=A*8 => held
v4 id=1 off=376 mf=1 fill=A*8 => held
v4 id=1 off=392 mf=1 fill=A*8 => held
v4 id=1 off=408 mf=1 fill=A*8 => held
v4 id=1 off=424 mf=1 fill=A*8 => held
v4 id=1 off=440 mf=1 fill=A*8 => held
v4 id=1 off=456 mf=1 fill=A*8 => held
v4 id=1 off=472 mf=1 fill=A*8 => held
v4 id=1 off=488 mf=1 fill=A*8 => held
v4 id=1 off=504 mf=1 fill=A*8 => held
v4 id=1 off=520 mf=1 fill=A*8 => held
v4 id=1 off=536 mf=1 fill=A*8 => held
v4 id=1 off=552 mf=1 fill=A*8 => held
v4 id=1 off=568 mf=1 fill=A*8 => held
v4 id=1 off=584 mf=1 fill=A*8 => held
v4 id=1 off=600 mf=1 fill=A*8 => held
v4 id=1 off=616 mf=1 fill=A*8 => held
v4 id=1 off=632 mf=1 fill=A*8 => held
v4 id=1 off=648 mf=1 fill=A*8 => held
v4 id=1 off=664 mf=1 fill=A*8 => held
v4 id=1 off=680 mf=1 fill=A*8 => held
v4 id=1 off=696 mf=1 fill=A*8 => held
v4 id=1 off=712 mf=1 fill=A*8 => held
v4 id=1 off=728 mf=1 fill=A*8 => held
v4 id=1 off=744 mf=1 fill=A*8 => held
v4 id=1 off=760 mf=1 fill=A*8 => held
v4 id=1 off=776 mf=1 fill=A*8 => held
v4 id=1 off=792 mf=1 fill=A*8 => held
v4 id=1 off=808 mf=1 fill=A*8 => held
v4 id=1 off=824 mf=1 fill=A*8 => held
v4 id=1 off=840 mf=1 fill=A*8 => held
v4 id=1 off=856 mf=1 fill=A*8 => held
v4 id=1 off=872 mf=1 fill=A*8 => held
v4 id=1 off=888 mf=1 fill=A*8 => held
v4 id=1 off=904 mf=1 fill=A*8 => held
v4 id=1 off=920 mf=1 fill=A*8 => held
v4 id=1 off=936 mf=1 fill=A*8 => held
v4 id=1 off=952 mf=1 fill=A*8 => held
v4 id=1 off=968 mf=1 fill=A*8 => held
v4 id=1 off=984 mf=1 fill=A*8 => held
v4 id=1 off=1000 mf=1 fill=A*8 => held
v4 id=1 off=1016 mf=1 fill=A*8 => held
stats => fragments=64 queues=1
v4 id=1 off=4096 mf=1 fill=B*8 => held
stats => fragments=65 queues=1
v4 id=1 off=1032 mf=1 fill=A*8 => dropped fragment
stats => fragments=0 queues=0
