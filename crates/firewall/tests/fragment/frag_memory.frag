# set limit frags 0: no fragment can be kept (PFRES_MEMORY); packets that are not fragments pass.
limits frags=0
v4 id=1 off=0 mf=1 fill=A*8 => dropped memory
v6 id=1 off=0 mf=1 fill=A*8 => dropped memory
v4 id=1 off=0 mf=0 fill=A*8 => not-fragment
stats => fragments=0 queues=0
