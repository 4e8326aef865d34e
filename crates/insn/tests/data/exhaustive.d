(000) ld       #0x0
(001) ld       #0x1
(002) ld       #0xf
(003) ld       #0x10
(004) ld       #0x1f
(005) ld       #0x20
(006) ld       #0xff
(007) ld       #0x7fffffff
(008) ld       #0x80000000
(009) ld       #0xffffffff
(010) ld       #0xfffff000
(011) ld       #0xfff00000
(012) ld       #0xffe00000
(013) ld       #0xfffff02c
(014) ld       #0x800
(015) ld       #0xc
(016) ldx      #0x0
(017) ldx      #0x1
(018) ldx      #0xf
(019) ldx      #0x10
(020) st       M[0]
(021) st       M[1]
(022) st       M[15]
(023) st       M[16]
(024) stx      M[0]
(025) stx      M[1]
(026) stx      M[15]
(027) stx      M[16]
(028) add      #0
(029) add      #1
(030) add      #15
(031) add      #16
(032) ja       33
(033) ja       35
(034) ja       50
(035) ja       52
(036) ja       68
(037) ja       70
(038) ja       294
(039) ja       -2147483609
(040) ja       -2147483607
(041) ja       41
(042) ja       -4053
(043) ja       -1048532
(044) ja       -2097107
(045) ja       -4006
(046) ja       2095
(047) ja       60
(048) ret      #0
(049) ret      #1
(050) ret      #15
(051) ret      #16
(052) tax      
(053) tax      
(054) tax      
(055) tax      
(056) unimp    0x8
(057) unimp    0x8
(058) unimp    0x8
(059) unimp    0x8
(060) unimp    0x8
(061) unimp    0x8
(062) unimp    0x8
(063) unimp    0x8
(064) unimp    0x8
(065) unimp    0x8
(066) unimp    0x8
(067) unimp    0x8
(068) unimp    0x8
(069) unimp    0x8
(070) unimp    0x8
(071) unimp    0x8
(072) unimp    0x9
(073) unimp    0x9
(074) unimp    0x9
(075) unimp    0x9
(076) unimp    0xa
(077) unimp    0xa
(078) unimp    0xa
(079) unimp    0xa
(080) unimp    0xb
(081) unimp    0xb
(082) unimp    0xb
(083) unimp    0xb
(084) add      x
(085) add      x
(086) add      x
(087) add      x
(088) unimp    0xd
(089) unimp    0xd
(090) unimp    0xd
(091) unimp    0xd
(092) unimp    0xd
(093) unimp    0xd
(094) unimp    0xd
(095) unimp    0xd
(096) unimp    0xd
(097) unimp    0xd
(098) unimp    0xd
(099) unimp    0xd
(100) unimp    0xd
(101) unimp    0xd
(102) unimp    0xd
(103) unimp    0xd
(104) unimp    0xe
(105) unimp    0xe
(106) unimp    0xe
(107) unimp    0xe
(108) unimp    0xf
(109) unimp    0xf
(110) unimp    0xf
(111) unimp    0xf
(112) unimp    0x10
(113) unimp    0x10
(114) unimp    0x10
(115) unimp    0x10
(116) unimp    0x10
(117) unimp    0x10
(118) unimp    0x10
(119) unimp    0x10
(120) unimp    0x10
(121) unimp    0x10
(122) unimp    0x10
(123) unimp    0x10
(124) unimp    0x10
(125) unimp    0x10
(126) unimp    0x10
(127) unimp    0x10
(128) unimp    0x11
(129) unimp    0x11
(130) unimp    0x11
(131) unimp    0x11
(132) unimp    0x12
(133) unimp    0x12
(134) unimp    0x12
(135) unimp    0x12
(136) unimp    0x13
(137) unimp    0x13
(138) unimp    0x13
(139) unimp    0x13
(140) sub      #0
(141) sub      #1
(142) sub      #15
(143) sub      #16
(144) jeq      #0x0             jt 292	jf 162
(145) jeq      #0x1             jt 294	jf 168
(146) jeq      #0xf             jt 296	jf 174
(147) jeq      #0x10            jt 298	jf 180
(148) jeq      #0x1f            jt 300	jf 186
(149) jeq      #0x20            jt 302	jf 192
(150) jeq      #0xff            jt 304	jf 198
(151) jeq      #0x7fffffff      jt 306	jf 204
(152) jeq      #0x80000000      jt 308	jf 210
(153) jeq      #0xffffffff      jt 310	jf 216
(154) jeq      #0xfffff000      jt 312	jf 222
(155) jeq      #0xfff00000      jt 314	jf 228
(156) jeq      #0xffe00000      jt 316	jf 234
(157) jeq      #0xfffff02c      jt 318	jf 240
(158) jeq      #0x800           jt 320	jf 246
(159) jeq      #0xc             jt 322	jf 252
(160) ret      
(161) ret      
(162) ret      
(163) ret      
(164) unimp    0x17
(165) unimp    0x17
(166) unimp    0x17
(167) unimp    0x17
(168) unimp    0x18
(169) unimp    0x18
(170) unimp    0x18
(171) unimp    0x18
(172) unimp    0x18
(173) unimp    0x18
(174) unimp    0x18
(175) unimp    0x18
(176) unimp    0x18
(177) unimp    0x18
(178) unimp    0x18
(179) unimp    0x18
(180) unimp    0x18
(181) unimp    0x18
(182) unimp    0x18
(183) unimp    0x18
(184) unimp    0x19
(185) unimp    0x19
(186) unimp    0x19
(187) unimp    0x19
(188) unimp    0x1a
(189) unimp    0x1a
(190) unimp    0x1a
(191) unimp    0x1a
(192) unimp    0x1b
(193) unimp    0x1b
(194) unimp    0x1b
(195) unimp    0x1b
(196) sub      x
(197) sub      x
(198) sub      x
(199) sub      x
(200) jeq      x                jt 404	jf 322
(201) jeq      x                jt 406	jf 328
(202) jeq      x                jt 408	jf 334
(203) jeq      x                jt 410	jf 340
(204) jeq      x                jt 412	jf 346
(205) jeq      x                jt 414	jf 352
(206) jeq      x                jt 416	jf 358
(207) jeq      x                jt 418	jf 364
(208) jeq      x                jt 420	jf 370
(209) jeq      x                jt 422	jf 376
(210) jeq      x                jt 424	jf 382
(211) jeq      x                jt 426	jf 388
(212) jeq      x                jt 428	jf 394
(213) jeq      x                jt 430	jf 400
(214) jeq      x                jt 432	jf 406
(215) jeq      x                jt 434	jf 412
(216) unimp    0x1e
(217) unimp    0x1e
(218) unimp    0x1e
(219) unimp    0x1e
(220) unimp    0x1f
(221) unimp    0x1f
(222) unimp    0x1f
(223) unimp    0x1f
(224) ld       [0]
(225) ld       [1]
(226) ld       [15]
(227) ld       [16]
(228) ld       [31]
(229) ld       [32]
(230) ld       [255]
(231) ld       [2147483647]
(232) ld       [-2147483648]
(233) ld       [-1]
(234) ld       [proto]
(235) ld       [-1048576]
(236) ld       [-2097152]
(237) ld       [vlan_tci]
(238) ld       [2048]
(239) ld       [12]
(240) unimp    0x21
(241) unimp    0x21
(242) unimp    0x21
(243) unimp    0x21
(244) unimp    0x22
(245) unimp    0x22
(246) unimp    0x22
(247) unimp    0x22
(248) unimp    0x23
(249) unimp    0x23
(250) unimp    0x23
(251) unimp    0x23
(252) mul      #0
(253) mul      #1
(254) mul      #15
(255) mul      #16
(256) jgt      #0x0             jt 260	jf 482
(257) jgt      #0x1             jt 262	jf 488
(258) jgt      #0xf             jt 264	jf 494
(259) jgt      #0x10            jt 266	jf 500
(260) jgt      #0x1f            jt 268	jf 506
(261) jgt      #0x20            jt 270	jf 512
(262) jgt      #0xff            jt 272	jf 518
(263) jgt      #0x7fffffff      jt 274	jf 268
(264) jgt      #0x80000000      jt 276	jf 274
(265) jgt      #0xffffffff      jt 278	jf 280
(266) jgt      #0xfffff000      jt 280	jf 286
(267) jgt      #0xfff00000      jt 282	jf 292
(268) jgt      #0xffe00000      jt 284	jf 298
(269) jgt      #0xfffff02c      jt 286	jf 304
(270) jgt      #0x800           jt 288	jf 310
(271) jgt      #0xc             jt 290	jf 316
(272) unimp    0x26
(273) unimp    0x26
(274) unimp    0x26
(275) unimp    0x26
(276) unimp    0x27
(277) unimp    0x27
(278) unimp    0x27
(279) unimp    0x27
(280) ldh      [0]
(281) ldh      [1]
(282) ldh      [15]
(283) ldh      [16]
(284) ldh      [31]
(285) ldh      [32]
(286) ldh      [255]
(287) ldh      [2147483647]
(288) ldh      [-2147483648]
(289) ldh      [-1]
(290) ldh      [proto]
(291) ldh      [-1048576]
(292) ldh      [-2097152]
(293) ldh      [vlan_tci]
(294) ldh      [2048]
(295) ldh      [12]
(296) unimp    0x29
(297) unimp    0x29
(298) unimp    0x29
(299) unimp    0x29
(300) unimp    0x2a
(301) unimp    0x2a
(302) unimp    0x2a
(303) unimp    0x2a
(304) unimp    0x2b
(305) unimp    0x2b
(306) unimp    0x2b
(307) unimp    0x2b
(308) mul      x
(309) mul      x
(310) mul      x
(311) mul      x
(312) jgt      x                jt 372	jf 386
(313) jgt      x                jt 374	jf 392
(314) jgt      x                jt 376	jf 398
(315) jgt      x                jt 378	jf 404
(316) jgt      x                jt 380	jf 410
(317) jgt      x                jt 382	jf 416
(318) jgt      x                jt 384	jf 422
(319) jgt      x                jt 386	jf 428
(320) jgt      x                jt 388	jf 434
(321) jgt      x                jt 390	jf 440
(322) jgt      x                jt 392	jf 446
(323) jgt      x                jt 394	jf 452
(324) jgt      x                jt 396	jf 458
(325) jgt      x                jt 398	jf 464
(326) jgt      x                jt 400	jf 470
(327) jgt      x                jt 402	jf 476
(328) unimp    0x2e
(329) unimp    0x2e
(330) unimp    0x2e
(331) unimp    0x2e
(332) unimp    0x2f
(333) unimp    0x2f
(334) unimp    0x2f
(335) unimp    0x2f
(336) ldb      [0]
(337) ldb      [1]
(338) ldb      [15]
(339) ldb      [16]
(340) ldb      [31]
(341) ldb      [32]
(342) ldb      [255]
(343) ldb      [2147483647]
(344) ldb      [-2147483648]
(345) ldb      [-1]
(346) ldb      [proto]
(347) ldb      [-1048576]
(348) ldb      [-2097152]
(349) ldb      [vlan_tci]
(350) ldb      [2048]
(351) ldb      [12]
(352) unimp    0x31
(353) unimp    0x31
(354) unimp    0x31
(355) unimp    0x31
(356) unimp    0x32
(357) unimp    0x32
(358) unimp    0x32
(359) unimp    0x32
(360) unimp    0x33
(361) unimp    0x33
(362) unimp    0x33
(363) unimp    0x33
(364) div      #0
(365) div      #1
(366) div      #15
(367) div      #16
(368) jge      #0x0             jt 484	jf 546
(369) jge      #0x1             jt 486	jf 552
(370) jge      #0xf             jt 488	jf 558
(371) jge      #0x10            jt 490	jf 564
(372) jge      #0x1f            jt 492	jf 570
(373) jge      #0x20            jt 494	jf 576
(374) jge      #0xff            jt 496	jf 582
(375) jge      #0x7fffffff      jt 498	jf 588
(376) jge      #0x80000000      jt 500	jf 594
(377) jge      #0xffffffff      jt 502	jf 600
(378) jge      #0xfffff000      jt 504	jf 606
(379) jge      #0xfff00000      jt 506	jf 612
(380) jge      #0xffe00000      jt 508	jf 618
(381) jge      #0xfffff02c      jt 510	jf 624
(382) jge      #0x800           jt 512	jf 630
(383) jge      #0xc             jt 514	jf 636
(384) unimp    0x36
(385) unimp    0x36
(386) unimp    0x36
(387) unimp    0x36
(388) unimp    0x37
(389) unimp    0x37
(390) unimp    0x37
(391) unimp    0x37
(392) unimp    0x38
(393) unimp    0x38
(394) unimp    0x38
(395) unimp    0x38
(396) unimp    0x38
(397) unimp    0x38
(398) unimp    0x38
(399) unimp    0x38
(400) unimp    0x38
(401) unimp    0x38
(402) unimp    0x38
(403) unimp    0x38
(404) unimp    0x38
(405) unimp    0x38
(406) unimp    0x38
(407) unimp    0x38
(408) unimp    0x39
(409) unimp    0x39
(410) unimp    0x39
(411) unimp    0x39
(412) unimp    0x3a
(413) unimp    0x3a
(414) unimp    0x3a
(415) unimp    0x3a
(416) unimp    0x3b
(417) unimp    0x3b
(418) unimp    0x3b
(419) unimp    0x3b
(420) div      x
(421) div      x
(422) div      x
(423) div      x
(424) jge      x                jt 596	jf 450
(425) jge      x                jt 598	jf 456
(426) jge      x                jt 600	jf 462
(427) jge      x                jt 602	jf 468
(428) jge      x                jt 604	jf 474
(429) jge      x                jt 606	jf 480
(430) jge      x                jt 608	jf 486
(431) jge      x                jt 610	jf 492
(432) jge      x                jt 612	jf 498
(433) jge      x                jt 614	jf 504
(434) jge      x                jt 616	jf 510
(435) jge      x                jt 618	jf 516
(436) jge      x                jt 620	jf 522
(437) jge      x                jt 622	jf 528
(438) jge      x                jt 624	jf 534
(439) jge      x                jt 626	jf 540
(440) unimp    0x3e
(441) unimp    0x3e
(442) unimp    0x3e
(443) unimp    0x3e
(444) unimp    0x3f
(445) unimp    0x3f
(446) unimp    0x3f
(447) unimp    0x3f
(448) ld       [x + 0]
(449) ld       [x + 1]
(450) ld       [x + 15]
(451) ld       [x + 16]
(452) ld       [x + 31]
(453) ld       [x + 32]
(454) ld       [x + 255]
(455) ld       [x + 2147483647]
(456) ld       [x + -2147483648]
(457) ld       [x + -1]
(458) ld       [x + -4096]
(459) ld       [x + -1048576]
(460) ld       [x + -2097152]
(461) ld       [x + -4052]
(462) ld       [x + 2048]
(463) ld       [x + 12]
(464) unimp    0x41
(465) unimp    0x41
(466) unimp    0x41
(467) unimp    0x41
(468) unimp    0x42
(469) unimp    0x42
(470) unimp    0x42
(471) unimp    0x42
(472) unimp    0x43
(473) unimp    0x43
(474) unimp    0x43
(475) unimp    0x43
(476) or       #0x0
(477) or       #0x1
(478) or       #0xf
(479) or       #0x10
(480) jset     #0x0             jt 708	jf 610
(481) jset     #0x1             jt 710	jf 616
(482) jset     #0xf             jt 712	jf 622
(483) jset     #0x10            jt 714	jf 628
(484) jset     #0x1f            jt 716	jf 634
(485) jset     #0x20            jt 718	jf 640
(486) jset     #0xff            jt 720	jf 646
(487) jset     #0x7fffffff      jt 722	jf 652
(488) jset     #0x80000000      jt 724	jf 658
(489) jset     #0xffffffff      jt 726	jf 664
(490) jset     #0xfffff000      jt 728	jf 670
(491) jset     #0xfff00000      jt 730	jf 676
(492) jset     #0xffe00000      jt 732	jf 682
(493) jset     #0xfffff02c      jt 734	jf 688
(494) jset     #0x800           jt 736	jf 694
(495) jset     #0xc             jt 738	jf 700
(496) unimp    0x46
(497) unimp    0x46
(498) unimp    0x46
(499) unimp    0x46
(500) unimp    0x47
(501) unimp    0x47
(502) unimp    0x47
(503) unimp    0x47
(504) ldh      [x + 0]
(505) ldh      [x + 1]
(506) ldh      [x + 15]
(507) ldh      [x + 16]
(508) ldh      [x + 31]
(509) ldh      [x + 32]
(510) ldh      [x + 255]
(511) ldh      [x + 2147483647]
(512) ldh      [x + -2147483648]
(513) ldh      [x + -1]
(514) ldh      [x + -4096]
(515) ldh      [x + -1048576]
(516) ldh      [x + -2097152]
(517) ldh      [x + -4052]
(518) ldh      [x + 2048]
(519) ldh      [x + 12]
(520) unimp    0x49
(521) unimp    0x49
(522) unimp    0x49
(523) unimp    0x49
(524) unimp    0x4a
(525) unimp    0x4a
(526) unimp    0x4a
(527) unimp    0x4a
(528) unimp    0x4b
(529) unimp    0x4b
(530) unimp    0x4b
(531) unimp    0x4b
(532) or       x
(533) or       x
(534) or       x
(535) or       x
(536) jset     x                jt 564	jf 770
(537) jset     x                jt 566	jf 776
(538) jset     x                jt 568	jf 782
(539) jset     x                jt 570	jf 788
(540) jset     x                jt 572	jf 794
(541) jset     x                jt 574	jf 544
(542) jset     x                jt 576	jf 550
(543) jset     x                jt 578	jf 556
(544) jset     x                jt 580	jf 562
(545) jset     x                jt 582	jf 568
(546) jset     x                jt 584	jf 574
(547) jset     x                jt 586	jf 580
(548) jset     x                jt 588	jf 586
(549) jset     x                jt 590	jf 592
(550) jset     x                jt 592	jf 598
(551) jset     x                jt 594	jf 604
(552) unimp    0x4e
(553) unimp    0x4e
(554) unimp    0x4e
(555) unimp    0x4e
(556) unimp    0x4f
(557) unimp    0x4f
(558) unimp    0x4f
(559) unimp    0x4f
(560) ldb      [x + 0]
(561) ldb      [x + 1]
(562) ldb      [x + 15]
(563) ldb      [x + 16]
(564) ldb      [x + 31]
(565) ldb      [x + 32]
(566) ldb      [x + 255]
(567) ldb      [x + 2147483647]
(568) ldb      [x + -2147483648]
(569) ldb      [x + -1]
(570) ldb      [x + -4096]
(571) ldb      [x + -1048576]
(572) ldb      [x + -2097152]
(573) ldb      [x + -4052]
(574) ldb      [x + 2048]
(575) ldb      [x + 12]
(576) unimp    0x51
(577) unimp    0x51
(578) unimp    0x51
(579) unimp    0x51
(580) unimp    0x52
(581) unimp    0x52
(582) unimp    0x52
(583) unimp    0x52
(584) unimp    0x53
(585) unimp    0x53
(586) unimp    0x53
(587) unimp    0x53
(588) and      #0x0
(589) and      #0x1
(590) and      #0xf
(591) and      #0x10
(592) unimp    0x55             jt 676	jf 674
(593) unimp    0x55             jt 678	jf 680
(594) unimp    0x55             jt 680	jf 686
(595) unimp    0x55             jt 682	jf 692
(596) unimp    0x55             jt 684	jf 698
(597) unimp    0x55             jt 686	jf 704
(598) unimp    0x55             jt 688	jf 710
(599) unimp    0x55             jt 690	jf 716
(600) unimp    0x55             jt 692	jf 722
(601) unimp    0x55             jt 694	jf 728
(602) unimp    0x55             jt 696	jf 734
(603) unimp    0x55             jt 698	jf 740
(604) unimp    0x55             jt 700	jf 746
(605) unimp    0x55             jt 702	jf 752
(606) unimp    0x55             jt 704	jf 758
(607) unimp    0x55             jt 706	jf 764
(608) unimp    0x56
(609) unimp    0x56
(610) unimp    0x56
(611) unimp    0x56
(612) unimp    0x57
(613) unimp    0x57
(614) unimp    0x57
(615) unimp    0x57
(616) unimp    0x58
(617) unimp    0x58
(618) unimp    0x58
(619) unimp    0x58
(620) unimp    0x58
(621) unimp    0x58
(622) unimp    0x58
(623) unimp    0x58
(624) unimp    0x58
(625) unimp    0x58
(626) unimp    0x58
(627) unimp    0x58
(628) unimp    0x58
(629) unimp    0x58
(630) unimp    0x58
(631) unimp    0x58
(632) unimp    0x59
(633) unimp    0x59
(634) unimp    0x59
(635) unimp    0x59
(636) unimp    0x5a
(637) unimp    0x5a
(638) unimp    0x5a
(639) unimp    0x5a
(640) unimp    0x5b
(641) unimp    0x5b
(642) unimp    0x5b
(643) unimp    0x5b
(644) and      x
(645) and      x
(646) and      x
(647) and      x
(648) unimp    0x5d             jt 788	jf 834
(649) unimp    0x5d             jt 790	jf 840
(650) unimp    0x5d             jt 792	jf 846
(651) unimp    0x5d             jt 794	jf 852
(652) unimp    0x5d             jt 796	jf 858
(653) unimp    0x5d             jt 798	jf 864
(654) unimp    0x5d             jt 800	jf 870
(655) unimp    0x5d             jt 802	jf 876
(656) unimp    0x5d             jt 804	jf 882
(657) unimp    0x5d             jt 806	jf 888
(658) unimp    0x5d             jt 808	jf 894
(659) unimp    0x5d             jt 810	jf 900
(660) unimp    0x5d             jt 812	jf 906
(661) unimp    0x5d             jt 814	jf 912
(662) unimp    0x5d             jt 816	jf 918
(663) unimp    0x5d             jt 818	jf 668
(664) unimp    0x5e
(665) unimp    0x5e
(666) unimp    0x5e
(667) unimp    0x5e
(668) unimp    0x5f
(669) unimp    0x5f
(670) unimp    0x5f
(671) unimp    0x5f
(672) ld       M[0]
(673) ld       M[1]
(674) ld       M[15]
(675) ld       M[16]
(676) ld       M[31]
(677) ld       M[32]
(678) ld       M[255]
(679) ld       M[2147483647]
(680) ld       M[-2147483648]
(681) ld       M[-1]
(682) ld       M[-4096]
(683) ld       M[-1048576]
(684) ld       M[-2097152]
(685) ld       M[-4052]
(686) ld       M[2048]
(687) ld       M[12]
(688) ldx      M[0]
(689) ldx      M[1]
(690) ldx      M[15]
(691) ldx      M[16]
(692) unimp    0x62
(693) unimp    0x62
(694) unimp    0x62
(695) unimp    0x62
(696) unimp    0x63
(697) unimp    0x63
(698) unimp    0x63
(699) unimp    0x63
(700) lsh      #0
(701) lsh      #1
(702) lsh      #15
(703) lsh      #16
(704) unimp    0x65             jt 900	jf 738
(705) unimp    0x65             jt 902	jf 744
(706) unimp    0x65             jt 904	jf 750
(707) unimp    0x65             jt 906	jf 756
(708) unimp    0x65             jt 908	jf 762
(709) unimp    0x65             jt 910	jf 768
(710) unimp    0x65             jt 912	jf 774
(711) unimp    0x65             jt 914	jf 780
(712) unimp    0x65             jt 916	jf 786
(713) unimp    0x65             jt 918	jf 792
(714) unimp    0x65             jt 920	jf 798
(715) unimp    0x65             jt 922	jf 804
(716) unimp    0x65             jt 924	jf 810
(717) unimp    0x65             jt 926	jf 816
(718) unimp    0x65             jt 928	jf 822
(719) unimp    0x65             jt 930	jf 828
(720) unimp    0x66
(721) unimp    0x66
(722) unimp    0x66
(723) unimp    0x66
(724) unimp    0x67
(725) unimp    0x67
(726) unimp    0x67
(727) unimp    0x67
(728) unimp    0x68
(729) unimp    0x68
(730) unimp    0x68
(731) unimp    0x68
(732) unimp    0x68
(733) unimp    0x68
(734) unimp    0x68
(735) unimp    0x68
(736) unimp    0x68
(737) unimp    0x68
(738) unimp    0x68
(739) unimp    0x68
(740) unimp    0x68
(741) unimp    0x68
(742) unimp    0x68
(743) unimp    0x68
(744) unimp    0x69
(745) unimp    0x69
(746) unimp    0x69
(747) unimp    0x69
(748) unimp    0x6a
(749) unimp    0x6a
(750) unimp    0x6a
(751) unimp    0x6a
(752) unimp    0x6b
(753) unimp    0x6b
(754) unimp    0x6b
(755) unimp    0x6b
(756) lsh      x
(757) lsh      x
(758) lsh      x
(759) lsh      x
(760) unimp    0x6d             jt 1012	jf 898
(761) unimp    0x6d             jt 1014	jf 904
(762) unimp    0x6d             jt 1016	jf 910
(763) unimp    0x6d             jt 1018	jf 916
(764) unimp    0x6d             jt 1020	jf 922
(765) unimp    0x6d             jt 766	jf 928
(766) unimp    0x6d             jt 768	jf 934
(767) unimp    0x6d             jt 770	jf 940
(768) unimp    0x6d             jt 772	jf 946
(769) unimp    0x6d             jt 774	jf 952
(770) unimp    0x6d             jt 776	jf 958
(771) unimp    0x6d             jt 778	jf 964
(772) unimp    0x6d             jt 780	jf 970
(773) unimp    0x6d             jt 782	jf 976
(774) unimp    0x6d             jt 784	jf 982
(775) unimp    0x6d             jt 786	jf 988
(776) unimp    0x6e
(777) unimp    0x6e
(778) unimp    0x6e
(779) unimp    0x6e
(780) unimp    0x6f
(781) unimp    0x6f
(782) unimp    0x6f
(783) unimp    0x6f
(784) unimp    0x70
(785) unimp    0x70
(786) unimp    0x70
(787) unimp    0x70
(788) unimp    0x70
(789) unimp    0x70
(790) unimp    0x70
(791) unimp    0x70
(792) unimp    0x70
(793) unimp    0x70
(794) unimp    0x70
(795) unimp    0x70
(796) unimp    0x70
(797) unimp    0x70
(798) unimp    0x70
(799) unimp    0x70
(800) unimp    0x71
(801) unimp    0x71
(802) unimp    0x71
(803) unimp    0x71
(804) unimp    0x72
(805) unimp    0x72
(806) unimp    0x72
(807) unimp    0x72
(808) unimp    0x73
(809) unimp    0x73
(810) unimp    0x73
(811) unimp    0x73
(812) rsh      #0
(813) rsh      #1
(814) rsh      #15
(815) rsh      #16
(816) unimp    0x75             jt 868	jf 1058
(817) unimp    0x75             jt 870	jf 1064
(818) unimp    0x75             jt 872	jf 1070
(819) unimp    0x75             jt 874	jf 820
(820) unimp    0x75             jt 876	jf 826
(821) unimp    0x75             jt 878	jf 832
(822) unimp    0x75             jt 880	jf 838
(823) unimp    0x75             jt 882	jf 844
(824) unimp    0x75             jt 884	jf 850
(825) unimp    0x75             jt 886	jf 856
(826) unimp    0x75             jt 888	jf 862
(827) unimp    0x75             jt 890	jf 868
(828) unimp    0x75             jt 892	jf 874
(829) unimp    0x75             jt 894	jf 880
(830) unimp    0x75             jt 896	jf 886
(831) unimp    0x75             jt 898	jf 892
(832) unimp    0x76
(833) unimp    0x76
(834) unimp    0x76
(835) unimp    0x76
(836) unimp    0x77
(837) unimp    0x77
(838) unimp    0x77
(839) unimp    0x77
(840) unimp    0x78
(841) unimp    0x78
(842) unimp    0x78
(843) unimp    0x78
(844) unimp    0x78
(845) unimp    0x78
(846) unimp    0x78
(847) unimp    0x78
(848) unimp    0x78
(849) unimp    0x78
(850) unimp    0x78
(851) unimp    0x78
(852) unimp    0x78
(853) unimp    0x78
(854) unimp    0x78
(855) unimp    0x78
(856) unimp    0x79
(857) unimp    0x79
(858) unimp    0x79
(859) unimp    0x79
(860) unimp    0x7a
(861) unimp    0x7a
(862) unimp    0x7a
(863) unimp    0x7a
(864) unimp    0x7b
(865) unimp    0x7b
(866) unimp    0x7b
(867) unimp    0x7b
(868) rsh      x
(869) rsh      x
(870) rsh      x
(871) rsh      x
(872) unimp    0x7d             jt 980	jf 962
(873) unimp    0x7d             jt 982	jf 968
(874) unimp    0x7d             jt 984	jf 974
(875) unimp    0x7d             jt 986	jf 980
(876) unimp    0x7d             jt 988	jf 986
(877) unimp    0x7d             jt 990	jf 992
(878) unimp    0x7d             jt 992	jf 998
(879) unimp    0x7d             jt 994	jf 1004
(880) unimp    0x7d             jt 996	jf 1010
(881) unimp    0x7d             jt 998	jf 1016
(882) unimp    0x7d             jt 1000	jf 1022
(883) unimp    0x7d             jt 1002	jf 1028
(884) unimp    0x7d             jt 1004	jf 1034
(885) unimp    0x7d             jt 1006	jf 1040
(886) unimp    0x7d             jt 1008	jf 1046
(887) unimp    0x7d             jt 1010	jf 1052
(888) unimp    0x7e
(889) unimp    0x7e
(890) unimp    0x7e
(891) unimp    0x7e
(892) unimp    0x7f
(893) unimp    0x7f
(894) unimp    0x7f
(895) unimp    0x7f
(896) ld       #pktlen
(897) ld       #pktlen
(898) ld       #pktlen
(899) ld       #pktlen
(900) ld       #pktlen
(901) ld       #pktlen
(902) ld       #pktlen
(903) ld       #pktlen
(904) ld       #pktlen
(905) ld       #pktlen
(906) ld       #pktlen
(907) ld       #pktlen
(908) ld       #pktlen
(909) ld       #pktlen
(910) ld       #pktlen
(911) ld       #pktlen
(912) unimp    0x81
(913) unimp    0x81
(914) unimp    0x81
(915) unimp    0x81
(916) unimp    0x82
(917) unimp    0x82
(918) unimp    0x82
(919) unimp    0x82
(920) unimp    0x83
(921) unimp    0x83
(922) unimp    0x83
(923) unimp    0x83
(924) neg      
(925) neg      
(926) neg      
(927) neg      
(928) unimp    0x85             jt 1092	jf 1122
(929) unimp    0x85             jt 1094	jf 1128
(930) unimp    0x85             jt 1096	jf 1134
(931) unimp    0x85             jt 1098	jf 1140
(932) unimp    0x85             jt 1100	jf 1146
(933) unimp    0x85             jt 1102	jf 1152
(934) unimp    0x85             jt 1104	jf 1158
(935) unimp    0x85             jt 1106	jf 1164
(936) unimp    0x85             jt 1108	jf 1170
(937) unimp    0x85             jt 1110	jf 1176
(938) unimp    0x85             jt 1112	jf 1182
(939) unimp    0x85             jt 1114	jf 1188
(940) unimp    0x85             jt 1116	jf 1194
(941) unimp    0x85             jt 1118	jf 944
(942) unimp    0x85             jt 1120	jf 950
(943) unimp    0x85             jt 1122	jf 956
(944) unimp    0x86
(945) unimp    0x86
(946) unimp    0x86
(947) unimp    0x86
(948) txa      
(949) txa      
(950) txa      
(951) txa      
(952) unimp    0x88
(953) unimp    0x88
(954) unimp    0x88
(955) unimp    0x88
(956) unimp    0x88
(957) unimp    0x88
(958) unimp    0x88
(959) unimp    0x88
(960) unimp    0x88
(961) unimp    0x88
(962) unimp    0x88
(963) unimp    0x88
(964) unimp    0x88
(965) unimp    0x88
(966) unimp    0x88
(967) unimp    0x88
(968) unimp    0x89
(969) unimp    0x89
(970) unimp    0x89
(971) unimp    0x89
(972) unimp    0x8a
(973) unimp    0x8a
(974) unimp    0x8a
(975) unimp    0x8a
(976) unimp    0x8b
(977) unimp    0x8b
(978) unimp    0x8b
(979) unimp    0x8b
(980) unimp    0x8c
(981) unimp    0x8c
(982) unimp    0x8c
(983) unimp    0x8c
(984) unimp    0x8d             jt 1204	jf 1026
(985) unimp    0x8d             jt 1206	jf 1032
(986) unimp    0x8d             jt 1208	jf 1038
(987) unimp    0x8d             jt 1210	jf 1044
(988) unimp    0x8d             jt 1212	jf 1050
(989) unimp    0x8d             jt 1214	jf 1056
(990) unimp    0x8d             jt 1216	jf 1062
(991) unimp    0x8d             jt 1218	jf 1068
(992) unimp    0x8d             jt 1220	jf 1074
(993) unimp    0x8d             jt 1222	jf 1080
(994) unimp    0x8d             jt 1224	jf 1086
(995) unimp    0x8d             jt 1226	jf 1092
(996) unimp    0x8d             jt 1228	jf 1098
(997) unimp    0x8d             jt 1230	jf 1104
(998) unimp    0x8d             jt 1232	jf 1110
(999) unimp    0x8d             jt 1234	jf 1116
(1000) unimp    0x8e
(1001) unimp    0x8e
(1002) unimp    0x8e
(1003) unimp    0x8e
(1004) unimp    0x8f
(1005) unimp    0x8f
(1006) unimp    0x8f
(1007) unimp    0x8f
(1008) unimp    0x90
(1009) unimp    0x90
(1010) unimp    0x90
(1011) unimp    0x90
(1012) unimp    0x90
(1013) unimp    0x90
(1014) unimp    0x90
(1015) unimp    0x90
(1016) unimp    0x90
(1017) unimp    0x90
(1018) unimp    0x90
(1019) unimp    0x90
(1020) unimp    0x90
(1021) unimp    0x90
(1022) unimp    0x90
(1023) unimp    0x90
(1024) unimp    0x91
(1025) unimp    0x91
(1026) unimp    0x91
(1027) unimp    0x91
(1028) unimp    0x92
(1029) unimp    0x92
(1030) unimp    0x92
(1031) unimp    0x92
(1032) unimp    0x93
(1033) unimp    0x93
(1034) unimp    0x93
(1035) unimp    0x93
(1036) mod      #0
(1037) mod      #1
(1038) mod      #15
(1039) mod      #16
(1040) unimp    0x95             jt 1060	jf 1186
(1041) unimp    0x95             jt 1062	jf 1192
(1042) unimp    0x95             jt 1064	jf 1198
(1043) unimp    0x95             jt 1066	jf 1204
(1044) unimp    0x95             jt 1068	jf 1210
(1045) unimp    0x95             jt 1070	jf 1216
(1046) unimp    0x95             jt 1072	jf 1222
(1047) unimp    0x95             jt 1074	jf 1228
(1048) unimp    0x95             jt 1076	jf 1234
(1049) unimp    0x95             jt 1078	jf 1240
(1050) unimp    0x95             jt 1080	jf 1246
(1051) unimp    0x95             jt 1082	jf 1252
(1052) unimp    0x95             jt 1084	jf 1258
(1053) unimp    0x95             jt 1086	jf 1264
(1054) unimp    0x95             jt 1088	jf 1270
(1055) unimp    0x95             jt 1090	jf 1276
(1056) unimp    0x96
(1057) unimp    0x96
(1058) unimp    0x96
(1059) unimp    0x96
(1060) unimp    0x97
(1061) unimp    0x97
(1062) unimp    0x97
(1063) unimp    0x97
(1064) unimp    0x98
(1065) unimp    0x98
(1066) unimp    0x98
(1067) unimp    0x98
(1068) unimp    0x98
(1069) unimp    0x98
(1070) unimp    0x98
(1071) unimp    0x98
(1072) unimp    0x98
(1073) unimp    0x98
(1074) unimp    0x98
(1075) unimp    0x98
(1076) unimp    0x98
(1077) unimp    0x98
(1078) unimp    0x98
(1079) unimp    0x98
(1080) unimp    0x99
(1081) unimp    0x99
(1082) unimp    0x99
(1083) unimp    0x99
(1084) unimp    0x9a
(1085) unimp    0x9a
(1086) unimp    0x9a
(1087) unimp    0x9a
(1088) unimp    0x9b
(1089) unimp    0x9b
(1090) unimp    0x9b
(1091) unimp    0x9b
(1092) mod      x
(1093) mod      x
(1094) mod      x
(1095) mod      x
(1096) unimp    0x9d             jt 1172	jf 1346
(1097) unimp    0x9d             jt 1174	jf 1352
(1098) unimp    0x9d             jt 1176	jf 1102
(1099) unimp    0x9d             jt 1178	jf 1108
(1100) unimp    0x9d             jt 1180	jf 1114
(1101) unimp    0x9d             jt 1182	jf 1120
(1102) unimp    0x9d             jt 1184	jf 1126
(1103) unimp    0x9d             jt 1186	jf 1132
(1104) unimp    0x9d             jt 1188	jf 1138
(1105) unimp    0x9d             jt 1190	jf 1144
(1106) unimp    0x9d             jt 1192	jf 1150
(1107) unimp    0x9d             jt 1194	jf 1156
(1108) unimp    0x9d             jt 1196	jf 1162
(1109) unimp    0x9d             jt 1198	jf 1168
(1110) unimp    0x9d             jt 1200	jf 1174
(1111) unimp    0x9d             jt 1202	jf 1180
(1112) unimp    0x9e
(1113) unimp    0x9e
(1114) unimp    0x9e
(1115) unimp    0x9e
(1116) unimp    0x9f
(1117) unimp    0x9f
(1118) unimp    0x9f
(1119) unimp    0x9f
(1120) unimp    0xa0
(1121) unimp    0xa0
(1122) unimp    0xa0
(1123) unimp    0xa0
(1124) unimp    0xa0
(1125) unimp    0xa0
(1126) unimp    0xa0
(1127) unimp    0xa0
(1128) unimp    0xa0
(1129) unimp    0xa0
(1130) unimp    0xa0
(1131) unimp    0xa0
(1132) unimp    0xa0
(1133) unimp    0xa0
(1134) unimp    0xa0
(1135) unimp    0xa0
(1136) unimp    0xa1
(1137) unimp    0xa1
(1138) unimp    0xa1
(1139) unimp    0xa1
(1140) unimp    0xa2
(1141) unimp    0xa2
(1142) unimp    0xa2
(1143) unimp    0xa2
(1144) unimp    0xa3
(1145) unimp    0xa3
(1146) unimp    0xa3
(1147) unimp    0xa3
(1148) xor      #0x0
(1149) xor      #0x1
(1150) xor      #0xf
(1151) xor      #0x10
(1152) unimp    0xa5             jt 1284	jf 1250
(1153) unimp    0xa5             jt 1286	jf 1256
(1154) unimp    0xa5             jt 1288	jf 1262
(1155) unimp    0xa5             jt 1290	jf 1268
(1156) unimp    0xa5             jt 1292	jf 1274
(1157) unimp    0xa5             jt 1294	jf 1280
(1158) unimp    0xa5             jt 1296	jf 1286
(1159) unimp    0xa5             jt 1298	jf 1292
(1160) unimp    0xa5             jt 1300	jf 1298
(1161) unimp    0xa5             jt 1302	jf 1304
(1162) unimp    0xa5             jt 1304	jf 1310
(1163) unimp    0xa5             jt 1306	jf 1316
(1164) unimp    0xa5             jt 1308	jf 1322
(1165) unimp    0xa5             jt 1310	jf 1328
(1166) unimp    0xa5             jt 1312	jf 1334
(1167) unimp    0xa5             jt 1314	jf 1340
(1168) unimp    0xa6
(1169) unimp    0xa6
(1170) unimp    0xa6
(1171) unimp    0xa6
(1172) unimp    0xa7
(1173) unimp    0xa7
(1174) unimp    0xa7
(1175) unimp    0xa7
(1176) unimp    0xa8
(1177) unimp    0xa8
(1178) unimp    0xa8
(1179) unimp    0xa8
(1180) unimp    0xa8
(1181) unimp    0xa8
(1182) unimp    0xa8
(1183) unimp    0xa8
(1184) unimp    0xa8
(1185) unimp    0xa8
(1186) unimp    0xa8
(1187) unimp    0xa8
(1188) unimp    0xa8
(1189) unimp    0xa8
(1190) unimp    0xa8
(1191) unimp    0xa8
(1192) unimp    0xa9
(1193) unimp    0xa9
(1194) unimp    0xa9
(1195) unimp    0xa9
(1196) unimp    0xaa
(1197) unimp    0xaa
(1198) unimp    0xaa
(1199) unimp    0xaa
(1200) unimp    0xab
(1201) unimp    0xab
(1202) unimp    0xab
(1203) unimp    0xab
(1204) xor      x
(1205) xor      x
(1206) xor      x
(1207) xor      x
(1208) unimp    0xad             jt 1396	jf 1410
(1209) unimp    0xad             jt 1398	jf 1416
(1210) unimp    0xad             jt 1400	jf 1422
(1211) unimp    0xad             jt 1402	jf 1428
(1212) unimp    0xad             jt 1404	jf 1434
(1213) unimp    0xad             jt 1406	jf 1440
(1214) unimp    0xad             jt 1408	jf 1446
(1215) unimp    0xad             jt 1410	jf 1452
(1216) unimp    0xad             jt 1412	jf 1458
(1217) unimp    0xad             jt 1414	jf 1464
(1218) unimp    0xad             jt 1416	jf 1470
(1219) unimp    0xad             jt 1418	jf 1220
(1220) unimp    0xad             jt 1420	jf 1226
(1221) unimp    0xad             jt 1422	jf 1232
(1222) unimp    0xad             jt 1424	jf 1238
(1223) unimp    0xad             jt 1426	jf 1244
(1224) unimp    0xae
(1225) unimp    0xae
(1226) unimp    0xae
(1227) unimp    0xae
(1228) unimp    0xaf
(1229) unimp    0xaf
(1230) unimp    0xaf
(1231) unimp    0xaf
(1232) unimp    0xb0
(1233) unimp    0xb0
(1234) unimp    0xb0
(1235) unimp    0xb0
(1236) unimp    0xb0
(1237) unimp    0xb0
(1238) unimp    0xb0
(1239) unimp    0xb0
(1240) unimp    0xb0
(1241) unimp    0xb0
(1242) unimp    0xb0
(1243) unimp    0xb0
(1244) unimp    0xb0
(1245) unimp    0xb0
(1246) unimp    0xb0
(1247) unimp    0xb0
(1248) ldxb     4*([0]&0xf)
(1249) ldxb     4*([1]&0xf)
(1250) ldxb     4*([15]&0xf)
(1251) ldxb     4*([16]&0xf)
(1252) unimp    0xb2
(1253) unimp    0xb2
(1254) unimp    0xb2
(1255) unimp    0xb2
(1256) unimp    0xb3
(1257) unimp    0xb3
(1258) unimp    0xb3
(1259) unimp    0xb3
(1260) unimp    0xb4
(1261) unimp    0xb4
(1262) unimp    0xb4
(1263) unimp    0xb4
(1264) unimp    0xb5             jt 1508	jf 1314
(1265) unimp    0xb5             jt 1510	jf 1320
(1266) unimp    0xb5             jt 1512	jf 1326
(1267) unimp    0xb5             jt 1514	jf 1332
(1268) unimp    0xb5             jt 1516	jf 1338
(1269) unimp    0xb5             jt 1518	jf 1344
(1270) unimp    0xb5             jt 1520	jf 1350
(1271) unimp    0xb5             jt 1522	jf 1356
(1272) unimp    0xb5             jt 1524	jf 1362
(1273) unimp    0xb5             jt 1526	jf 1368
(1274) unimp    0xb5             jt 1528	jf 1374
(1275) unimp    0xb5             jt 1530	jf 1380
(1276) unimp    0xb5             jt 1532	jf 1386
(1277) unimp    0xb5             jt 1278	jf 1392
(1278) unimp    0xb5             jt 1280	jf 1398
(1279) unimp    0xb5             jt 1282	jf 1404
(1280) unimp    0xb6
(1281) unimp    0xb6
(1282) unimp    0xb6
(1283) unimp    0xb6
(1284) unimp    0xb7
(1285) unimp    0xb7
(1286) unimp    0xb7
(1287) unimp    0xb7
(1288) unimp    0xb8
(1289) unimp    0xb8
(1290) unimp    0xb8
(1291) unimp    0xb8
(1292) unimp    0xb8
(1293) unimp    0xb8
(1294) unimp    0xb8
(1295) unimp    0xb8
(1296) unimp    0xb8
(1297) unimp    0xb8
(1298) unimp    0xb8
(1299) unimp    0xb8
(1300) unimp    0xb8
(1301) unimp    0xb8
(1302) unimp    0xb8
(1303) unimp    0xb8
(1304) unimp    0xb9
(1305) unimp    0xb9
(1306) unimp    0xb9
(1307) unimp    0xb9
(1308) unimp    0xba
(1309) unimp    0xba
(1310) unimp    0xba
(1311) unimp    0xba
(1312) unimp    0xbb
(1313) unimp    0xbb
(1314) unimp    0xbb
(1315) unimp    0xbb
(1316) unimp    0xbc
(1317) unimp    0xbc
(1318) unimp    0xbc
(1319) unimp    0xbc
(1320) unimp    0xbd             jt 1364	jf 1474
(1321) unimp    0xbd             jt 1366	jf 1480
(1322) unimp    0xbd             jt 1368	jf 1486
(1323) unimp    0xbd             jt 1370	jf 1492
(1324) unimp    0xbd             jt 1372	jf 1498
(1325) unimp    0xbd             jt 1374	jf 1504
(1326) unimp    0xbd             jt 1376	jf 1510
(1327) unimp    0xbd             jt 1378	jf 1516
(1328) unimp    0xbd             jt 1380	jf 1522
(1329) unimp    0xbd             jt 1382	jf 1528
(1330) unimp    0xbd             jt 1384	jf 1534
(1331) unimp    0xbd             jt 1386	jf 1540
(1332) unimp    0xbd             jt 1388	jf 1546
(1333) unimp    0xbd             jt 1390	jf 1552
(1334) unimp    0xbd             jt 1392	jf 1558
(1335) unimp    0xbd             jt 1394	jf 1564
(1336) unimp    0xbe
(1337) unimp    0xbe
(1338) unimp    0xbe
(1339) unimp    0xbe
(1340) unimp    0xbf
(1341) unimp    0xbf
(1342) unimp    0xbf
(1343) unimp    0xbf
(1344) unimp    0xc0
(1345) unimp    0xc0
(1346) unimp    0xc0
(1347) unimp    0xc0
(1348) unimp    0xc0
(1349) unimp    0xc0
(1350) unimp    0xc0
(1351) unimp    0xc0
(1352) unimp    0xc0
(1353) unimp    0xc0
(1354) unimp    0xc0
(1355) unimp    0xc0
(1356) unimp    0xc0
(1357) unimp    0xc0
(1358) unimp    0xc0
(1359) unimp    0xc0
(1360) unimp    0xc1
(1361) unimp    0xc1
(1362) unimp    0xc1
(1363) unimp    0xc1
(1364) unimp    0xc2
(1365) unimp    0xc2
(1366) unimp    0xc2
(1367) unimp    0xc2
(1368) unimp    0xc3
(1369) unimp    0xc3
(1370) unimp    0xc3
(1371) unimp    0xc3
(1372) unimp    0xc4
(1373) unimp    0xc4
(1374) unimp    0xc4
(1375) unimp    0xc4
(1376) unimp    0xc5             jt 1476	jf 1378
(1377) unimp    0xc5             jt 1478	jf 1384
(1378) unimp    0xc5             jt 1480	jf 1390
(1379) unimp    0xc5             jt 1482	jf 1396
(1380) unimp    0xc5             jt 1484	jf 1402
(1381) unimp    0xc5             jt 1486	jf 1408
(1382) unimp    0xc5             jt 1488	jf 1414
(1383) unimp    0xc5             jt 1490	jf 1420
(1384) unimp    0xc5             jt 1492	jf 1426
(1385) unimp    0xc5             jt 1494	jf 1432
(1386) unimp    0xc5             jt 1496	jf 1438
(1387) unimp    0xc5             jt 1498	jf 1444
(1388) unimp    0xc5             jt 1500	jf 1450
(1389) unimp    0xc5             jt 1502	jf 1456
(1390) unimp    0xc5             jt 1504	jf 1462
(1391) unimp    0xc5             jt 1506	jf 1468
(1392) unimp    0xc6
(1393) unimp    0xc6
(1394) unimp    0xc6
(1395) unimp    0xc6
(1396) unimp    0xc7
(1397) unimp    0xc7
(1398) unimp    0xc7
(1399) unimp    0xc7
(1400) unimp    0xc8
(1401) unimp    0xc8
(1402) unimp    0xc8
(1403) unimp    0xc8
(1404) unimp    0xc8
(1405) unimp    0xc8
(1406) unimp    0xc8
(1407) unimp    0xc8
(1408) unimp    0xc8
(1409) unimp    0xc8
(1410) unimp    0xc8
(1411) unimp    0xc8
(1412) unimp    0xc8
(1413) unimp    0xc8
(1414) unimp    0xc8
(1415) unimp    0xc8
(1416) unimp    0xc9
(1417) unimp    0xc9
(1418) unimp    0xc9
(1419) unimp    0xc9
(1420) unimp    0xca
(1421) unimp    0xca
(1422) unimp    0xca
(1423) unimp    0xca
(1424) unimp    0xcb
(1425) unimp    0xcb
(1426) unimp    0xcb
(1427) unimp    0xcb
(1428) unimp    0xcc
(1429) unimp    0xcc
(1430) unimp    0xcc
(1431) unimp    0xcc
(1432) unimp    0xcd             jt 1588	jf 1538
(1433) unimp    0xcd             jt 1590	jf 1544
(1434) unimp    0xcd             jt 1592	jf 1550
(1435) unimp    0xcd             jt 1594	jf 1556
(1436) unimp    0xcd             jt 1596	jf 1562
(1437) unimp    0xcd             jt 1598	jf 1568
(1438) unimp    0xcd             jt 1600	jf 1574
(1439) unimp    0xcd             jt 1602	jf 1580
(1440) unimp    0xcd             jt 1604	jf 1586
(1441) unimp    0xcd             jt 1606	jf 1592
(1442) unimp    0xcd             jt 1608	jf 1598
(1443) unimp    0xcd             jt 1610	jf 1604
(1444) unimp    0xcd             jt 1612	jf 1610
(1445) unimp    0xcd             jt 1614	jf 1616
(1446) unimp    0xcd             jt 1616	jf 1622
(1447) unimp    0xcd             jt 1618	jf 1628
(1448) unimp    0xce
(1449) unimp    0xce
(1450) unimp    0xce
(1451) unimp    0xce
(1452) unimp    0xcf
(1453) unimp    0xcf
(1454) unimp    0xcf
(1455) unimp    0xcf
(1456) unimp    0xd0
(1457) unimp    0xd0
(1458) unimp    0xd0
(1459) unimp    0xd0
(1460) unimp    0xd0
(1461) unimp    0xd0
(1462) unimp    0xd0
(1463) unimp    0xd0
(1464) unimp    0xd0
(1465) unimp    0xd0
(1466) unimp    0xd0
(1467) unimp    0xd0
(1468) unimp    0xd0
(1469) unimp    0xd0
(1470) unimp    0xd0
(1471) unimp    0xd0
(1472) unimp    0xd1
(1473) unimp    0xd1
(1474) unimp    0xd1
(1475) unimp    0xd1
(1476) unimp    0xd2
(1477) unimp    0xd2
(1478) unimp    0xd2
(1479) unimp    0xd2
(1480) unimp    0xd3
(1481) unimp    0xd3
(1482) unimp    0xd3
(1483) unimp    0xd3
(1484) unimp    0xd4
(1485) unimp    0xd4
(1486) unimp    0xd4
(1487) unimp    0xd4
(1488) unimp    0xd5             jt 1700	jf 1698
(1489) unimp    0xd5             jt 1702	jf 1704
(1490) unimp    0xd5             jt 1704	jf 1710
(1491) unimp    0xd5             jt 1706	jf 1716
(1492) unimp    0xd5             jt 1708	jf 1722
(1493) unimp    0xd5             jt 1710	jf 1728
(1494) unimp    0xd5             jt 1712	jf 1734
(1495) unimp    0xd5             jt 1714	jf 1740
(1496) unimp    0xd5             jt 1716	jf 1746
(1497) unimp    0xd5             jt 1718	jf 1752
(1498) unimp    0xd5             jt 1720	jf 1502
(1499) unimp    0xd5             jt 1722	jf 1508
(1500) unimp    0xd5             jt 1724	jf 1514
(1501) unimp    0xd5             jt 1726	jf 1520
(1502) unimp    0xd5             jt 1728	jf 1526
(1503) unimp    0xd5             jt 1730	jf 1532
(1504) unimp    0xd6
(1505) unimp    0xd6
(1506) unimp    0xd6
(1507) unimp    0xd6
(1508) unimp    0xd7
(1509) unimp    0xd7
(1510) unimp    0xd7
(1511) unimp    0xd7
(1512) unimp    0xd8
(1513) unimp    0xd8
(1514) unimp    0xd8
(1515) unimp    0xd8
(1516) unimp    0xd8
(1517) unimp    0xd8
(1518) unimp    0xd8
(1519) unimp    0xd8
(1520) unimp    0xd8
(1521) unimp    0xd8
(1522) unimp    0xd8
(1523) unimp    0xd8
(1524) unimp    0xd8
(1525) unimp    0xd8
(1526) unimp    0xd8
(1527) unimp    0xd8
(1528) unimp    0xd9
(1529) unimp    0xd9
(1530) unimp    0xd9
(1531) unimp    0xd9
(1532) unimp    0xda
(1533) unimp    0xda
(1534) unimp    0xda
(1535) unimp    0xda
(1536) unimp    0xdb
(1537) unimp    0xdb
(1538) unimp    0xdb
(1539) unimp    0xdb
(1540) unimp    0xdc
(1541) unimp    0xdc
(1542) unimp    0xdc
(1543) unimp    0xdc
(1544) unimp    0xdd             jt 1556	jf 1602
(1545) unimp    0xdd             jt 1558	jf 1608
(1546) unimp    0xdd             jt 1560	jf 1614
(1547) unimp    0xdd             jt 1562	jf 1620
(1548) unimp    0xdd             jt 1564	jf 1626
(1549) unimp    0xdd             jt 1566	jf 1632
(1550) unimp    0xdd             jt 1568	jf 1638
(1551) unimp    0xdd             jt 1570	jf 1644
(1552) unimp    0xdd             jt 1572	jf 1650
(1553) unimp    0xdd             jt 1574	jf 1656
(1554) unimp    0xdd             jt 1576	jf 1662
(1555) unimp    0xdd             jt 1578	jf 1668
(1556) unimp    0xdd             jt 1580	jf 1674
(1557) unimp    0xdd             jt 1582	jf 1680
(1558) unimp    0xdd             jt 1584	jf 1686
(1559) unimp    0xdd             jt 1586	jf 1692
(1560) unimp    0xde
(1561) unimp    0xde
(1562) unimp    0xde
(1563) unimp    0xde
(1564) unimp    0xdf
(1565) unimp    0xdf
(1566) unimp    0xdf
(1567) unimp    0xdf
(1568) unimp    0xe0
(1569) unimp    0xe0
(1570) unimp    0xe0
(1571) unimp    0xe0
(1572) unimp    0xe0
(1573) unimp    0xe0
(1574) unimp    0xe0
(1575) unimp    0xe0
(1576) unimp    0xe0
(1577) unimp    0xe0
(1578) unimp    0xe0
(1579) unimp    0xe0
(1580) unimp    0xe0
(1581) unimp    0xe0
(1582) unimp    0xe0
(1583) unimp    0xe0
(1584) unimp    0xe1
(1585) unimp    0xe1
(1586) unimp    0xe1
(1587) unimp    0xe1
(1588) unimp    0xe2
(1589) unimp    0xe2
(1590) unimp    0xe2
(1591) unimp    0xe2
(1592) unimp    0xe3
(1593) unimp    0xe3
(1594) unimp    0xe3
(1595) unimp    0xe3
(1596) unimp    0xe4
(1597) unimp    0xe4
(1598) unimp    0xe4
(1599) unimp    0xe4
(1600) unimp    0xe5             jt 1668	jf 1762
(1601) unimp    0xe5             jt 1670	jf 1768
(1602) unimp    0xe5             jt 1672	jf 1774
(1603) unimp    0xe5             jt 1674	jf 1780
(1604) unimp    0xe5             jt 1676	jf 1786
(1605) unimp    0xe5             jt 1678	jf 1792
(1606) unimp    0xe5             jt 1680	jf 1798
(1607) unimp    0xe5             jt 1682	jf 1804
(1608) unimp    0xe5             jt 1684	jf 1810
(1609) unimp    0xe5             jt 1686	jf 1816
(1610) unimp    0xe5             jt 1688	jf 1822
(1611) unimp    0xe5             jt 1690	jf 1828
(1612) unimp    0xe5             jt 1692	jf 1834
(1613) unimp    0xe5             jt 1694	jf 1840
(1614) unimp    0xe5             jt 1696	jf 1846
(1615) unimp    0xe5             jt 1698	jf 1852
(1616) unimp    0xe6
(1617) unimp    0xe6
(1618) unimp    0xe6
(1619) unimp    0xe6
(1620) unimp    0xe7
(1621) unimp    0xe7
(1622) unimp    0xe7
(1623) unimp    0xe7
(1624) unimp    0xe8
(1625) unimp    0xe8
(1626) unimp    0xe8
(1627) unimp    0xe8
(1628) unimp    0xe8
(1629) unimp    0xe8
(1630) unimp    0xe8
(1631) unimp    0xe8
(1632) unimp    0xe8
(1633) unimp    0xe8
(1634) unimp    0xe8
(1635) unimp    0xe8
(1636) unimp    0xe8
(1637) unimp    0xe8
(1638) unimp    0xe8
(1639) unimp    0xe8
(1640) unimp    0xe9
(1641) unimp    0xe9
(1642) unimp    0xe9
(1643) unimp    0xe9
(1644) unimp    0xea
(1645) unimp    0xea
(1646) unimp    0xea
(1647) unimp    0xea
(1648) unimp    0xeb
(1649) unimp    0xeb
(1650) unimp    0xeb
(1651) unimp    0xeb
(1652) unimp    0xec
(1653) unimp    0xec
(1654) unimp    0xec
(1655) unimp    0xec
(1656) unimp    0xed             jt 1780	jf 1666
(1657) unimp    0xed             jt 1782	jf 1672
(1658) unimp    0xed             jt 1784	jf 1678
(1659) unimp    0xed             jt 1786	jf 1684
(1660) unimp    0xed             jt 1788	jf 1690
(1661) unimp    0xed             jt 1790	jf 1696
(1662) unimp    0xed             jt 1792	jf 1702
(1663) unimp    0xed             jt 1794	jf 1708
(1664) unimp    0xed             jt 1796	jf 1714
(1665) unimp    0xed             jt 1798	jf 1720
(1666) unimp    0xed             jt 1800	jf 1726
(1667) unimp    0xed             jt 1802	jf 1732
(1668) unimp    0xed             jt 1804	jf 1738
(1669) unimp    0xed             jt 1806	jf 1744
(1670) unimp    0xed             jt 1808	jf 1750
(1671) unimp    0xed             jt 1810	jf 1756
(1672) unimp    0xee
(1673) unimp    0xee
(1674) unimp    0xee
(1675) unimp    0xee
(1676) unimp    0xef
(1677) unimp    0xef
(1678) unimp    0xef
(1679) unimp    0xef
(1680) unimp    0xf0
(1681) unimp    0xf0
(1682) unimp    0xf0
(1683) unimp    0xf0
(1684) unimp    0xf0
(1685) unimp    0xf0
(1686) unimp    0xf0
(1687) unimp    0xf0
(1688) unimp    0xf0
(1689) unimp    0xf0
(1690) unimp    0xf0
(1691) unimp    0xf0
(1692) unimp    0xf0
(1693) unimp    0xf0
(1694) unimp    0xf0
(1695) unimp    0xf0
(1696) unimp    0xf1
(1697) unimp    0xf1
(1698) unimp    0xf1
(1699) unimp    0xf1
(1700) unimp    0xf2
(1701) unimp    0xf2
(1702) unimp    0xf2
(1703) unimp    0xf2
(1704) unimp    0xf3
(1705) unimp    0xf3
(1706) unimp    0xf3
(1707) unimp    0xf3
(1708) unimp    0xf4
(1709) unimp    0xf4
(1710) unimp    0xf4
(1711) unimp    0xf4
(1712) unimp    0xf5             jt 1892	jf 1826
(1713) unimp    0xf5             jt 1894	jf 1832
(1714) unimp    0xf5             jt 1896	jf 1838
(1715) unimp    0xf5             jt 1898	jf 1844
(1716) unimp    0xf5             jt 1900	jf 1850
(1717) unimp    0xf5             jt 1902	jf 1856
(1718) unimp    0xf5             jt 1904	jf 1862
(1719) unimp    0xf5             jt 1906	jf 1868
(1720) unimp    0xf5             jt 1908	jf 1874
(1721) unimp    0xf5             jt 1910	jf 1880
(1722) unimp    0xf5             jt 1912	jf 1886
(1723) unimp    0xf5             jt 1914	jf 1892
(1724) unimp    0xf5             jt 1916	jf 1898
(1725) unimp    0xf5             jt 1918	jf 1904
(1726) unimp    0xf5             jt 1920	jf 1910
(1727) unimp    0xf5             jt 1922	jf 1916
(1728) unimp    0xf6
(1729) unimp    0xf6
(1730) unimp    0xf6
(1731) unimp    0xf6
(1732) unimp    0xf7
(1733) unimp    0xf7
(1734) unimp    0xf7
(1735) unimp    0xf7
(1736) unimp    0xf8
(1737) unimp    0xf8
(1738) unimp    0xf8
(1739) unimp    0xf8
(1740) unimp    0xf8
(1741) unimp    0xf8
(1742) unimp    0xf8
(1743) unimp    0xf8
(1744) unimp    0xf8
(1745) unimp    0xf8
(1746) unimp    0xf8
(1747) unimp    0xf8
(1748) unimp    0xf8
(1749) unimp    0xf8
(1750) unimp    0xf8
(1751) unimp    0xf8
(1752) unimp    0xf9
(1753) unimp    0xf9
(1754) unimp    0xf9
(1755) unimp    0xf9
(1756) unimp    0xfa
(1757) unimp    0xfa
(1758) unimp    0xfa
(1759) unimp    0xfa
(1760) unimp    0xfb
(1761) unimp    0xfb
(1762) unimp    0xfb
(1763) unimp    0xfb
(1764) unimp    0xfc
(1765) unimp    0xfc
(1766) unimp    0xfc
(1767) unimp    0xfc
(1768) unimp    0xfd             jt 2004	jf 1986
(1769) unimp    0xfd             jt 2006	jf 1992
(1770) unimp    0xfd             jt 2008	jf 1998
(1771) unimp    0xfd             jt 2010	jf 2004
(1772) unimp    0xfd             jt 2012	jf 2010
(1773) unimp    0xfd             jt 2014	jf 2016
(1774) unimp    0xfd             jt 2016	jf 2022
(1775) unimp    0xfd             jt 2018	jf 2028
(1776) unimp    0xfd             jt 2020	jf 1778
(1777) unimp    0xfd             jt 2022	jf 1784
(1778) unimp    0xfd             jt 2024	jf 1790
(1779) unimp    0xfd             jt 2026	jf 1796
(1780) unimp    0xfd             jt 2028	jf 1802
(1781) unimp    0xfd             jt 2030	jf 1808
(1782) unimp    0xfd             jt 2032	jf 1814
(1783) unimp    0xfd             jt 2034	jf 1820
(1784) unimp    0xfe
(1785) unimp    0xfe
(1786) unimp    0xfe
(1787) unimp    0xfe
(1788) unimp    0xff
(1789) unimp    0xff
(1790) unimp    0xff
(1791) unimp    0xff
(1792) ld       [-4104]
(1793) ld       [-4100]
(1794) ld       [proto]
(1795) ld       [type]
(1796) ld       [ifidx]
(1797) ld       [nla]
(1798) ld       [nlan]
(1799) ld       [mark]
(1800) ld       [queue]
(1801) ld       [hatype]
(1802) ld       [rxhash]
(1803) ld       [cpu]
(1804) ld       [xor_x]
(1805) ld       [vlan_tci]
(1806) ld       [vlanp]
(1807) ld       [poff]
(1808) ld       [random]
(1809) ld       [vlan_tpid]
(1810) ld       [-4032]
(1811) ld       [-4028]
(1812) ld       [-4095]
(1813) ldh      [-4104]
(1814) ldh      [-4100]
(1815) ldh      [proto]
(1816) ldh      [type]
(1817) ldh      [ifidx]
(1818) ldh      [nla]
(1819) ldh      [nlan]
(1820) ldh      [mark]
(1821) ldh      [queue]
(1822) ldh      [hatype]
(1823) ldh      [rxhash]
(1824) ldh      [cpu]
(1825) ldh      [xor_x]
(1826) ldh      [vlan_tci]
(1827) ldh      [vlanp]
(1828) ldh      [poff]
(1829) ldh      [random]
(1830) ldh      [vlan_tpid]
(1831) ldh      [-4032]
(1832) ldh      [-4028]
(1833) ldh      [-4095]
(1834) ldb      [-4104]
(1835) ldb      [-4100]
(1836) ldb      [proto]
(1837) ldb      [type]
(1838) ldb      [ifidx]
(1839) ldb      [nla]
(1840) ldb      [nlan]
(1841) ldb      [mark]
(1842) ldb      [queue]
(1843) ldb      [hatype]
(1844) ldb      [rxhash]
(1845) ldb      [cpu]
(1846) ldb      [xor_x]
(1847) ldb      [vlan_tci]
(1848) ldb      [vlanp]
(1849) ldb      [poff]
(1850) ldb      [random]
(1851) ldb      [vlan_tpid]
(1852) ldb      [-4032]
(1853) ldb      [-4028]
(1854) ldb      [-4095]
(1855) ld       [x + -4104]
(1856) ld       [x + -4100]
(1857) ld       [x + -4096]
(1858) ld       [x + -4092]
(1859) ld       [x + -4088]
(1860) ld       [x + -4084]
(1861) ld       [x + -4080]
(1862) ld       [x + -4076]
(1863) ld       [x + -4072]
(1864) ld       [x + -4068]
(1865) ld       [x + -4064]
(1866) ld       [x + -4060]
(1867) ld       [x + -4056]
(1868) ld       [x + -4052]
(1869) ld       [x + -4048]
(1870) ld       [x + -4044]
(1871) ld       [x + -4040]
(1872) ld       [x + -4036]
(1873) ld       [x + -4032]
(1874) ld       [x + -4028]
(1875) ld       [x + -4095]
(1876) ldh      [x + -4104]
(1877) ldh      [x + -4100]
(1878) ldh      [x + -4096]
(1879) ldh      [x + -4092]
(1880) ldh      [x + -4088]
(1881) ldh      [x + -4084]
(1882) ldh      [x + -4080]
(1883) ldh      [x + -4076]
(1884) ldh      [x + -4072]
(1885) ldh      [x + -4068]
(1886) ldh      [x + -4064]
(1887) ldh      [x + -4060]
(1888) ldh      [x + -4056]
(1889) ldh      [x + -4052]
(1890) ldh      [x + -4048]
(1891) ldh      [x + -4044]
(1892) ldh      [x + -4040]
(1893) ldh      [x + -4036]
(1894) ldh      [x + -4032]
(1895) ldh      [x + -4028]
(1896) ldh      [x + -4095]
(1897) ldb      [x + -4104]
(1898) ldb      [x + -4100]
(1899) ldb      [x + -4096]
(1900) ldb      [x + -4092]
(1901) ldb      [x + -4088]
(1902) ldb      [x + -4084]
(1903) ldb      [x + -4080]
(1904) ldb      [x + -4076]
(1905) ldb      [x + -4072]
(1906) ldb      [x + -4068]
(1907) ldb      [x + -4064]
(1908) ldb      [x + -4060]
(1909) ldb      [x + -4056]
(1910) ldb      [x + -4052]
(1911) ldb      [x + -4048]
(1912) ldb      [x + -4044]
(1913) ldb      [x + -4040]
(1914) ldb      [x + -4036]
(1915) ldb      [x + -4032]
(1916) ldb      [x + -4028]
(1917) ldb      [x + -4095]
(1918) unimp    0x100
(1919) unimp    0x115            jt 1923	jf 1924
(1920) unimp    0x1ff
(1921) unimp    0x8000
(1922) unimp    0xffff
