# set timeout frag: queues are freed a timeout after they were created, from the least
# recently used one; the purge stops at the first queue that is not old enough.
limits timeout=60
v4 id=1 off=0 mf=1 fill=A*8 at=0 => held
v4 id=2 off=0 mf=1 fill=A*8 at=10 => held
v4 id=1 off=16 mf=1 fill=A*8 at=20 => held
expire at=59 => freed 0
expire at=60 => freed 0
stats => fragments=3 queues=2
expire at=70 => freed 2
stats => fragments=0 queues=0
v4 id=1 off=8 mf=1 fill=A*8 at=71 => held
stats => fragments=1 queues=1
