# prog=xdp  exit without r0
exit
