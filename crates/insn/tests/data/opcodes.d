(000) ld       #0xf
(001) ldx      #0xf
(002) st       M[15]
(003) stx      M[15]
(004) add      #15
(005) ja       21
(006) tax      
(007) add      x
(008) sub      #15
(009) jeq      #0xf             jt 11	jf 10
(010) sub      x
(011) jeq      x                jt 13	jf 12
(012) ld       [15]
(013) mul      #15
(014) jgt      #0xf             jt 16	jf 15
(015) ldh      [15]
(016) mul      x
(017) jgt      x                jt 19	jf 18
(018) ldb      [15]
(019) div      #15
(020) jge      #0xf             jt 22	jf 21
(021) div      x
(022) jge      x                jt 24	jf 23
(023) ld       [x + 15]
(024) or       #0xf
(025) jset     #0xf             jt 27	jf 26
(026) ldh      [x + 15]
(027) or       x
(028) jset     x                jt 30	jf 29
(029) ldb      [x + 15]
(030) and      #0xf
(031) and      x
(032) ld       M[15]
(033) ldx      M[15]
(034) lsh      #15
(035) lsh      x
(036) rsh      #15
(037) rsh      x
(038) ld       #pktlen
(039) unimp    0x81
(040) neg      
(041) txa      
(042) mod      #15
(043) mod      x
(044) xor      #0xf
(045) xor      x
(046) ldxb     4*([15]&0xf)
(047) ret      #15
(048) ret      
