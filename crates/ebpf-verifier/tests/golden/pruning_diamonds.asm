# prog=xdp  40 diamonds: without pruning 2^40 paths, with it a few per diamond
mov %r6, %r1
mov %r0, 0
ldxw %r3, [%r6+12]
jgt %r3, 0, a0
mov %r2, 1
ja j0
a0:
mov %r2, 1
j0:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 1, a1
mov %r2, 1
ja j1
a1:
mov %r2, 1
j1:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 2, a2
mov %r2, 1
ja j2
a2:
mov %r2, 1
j2:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 3, a3
mov %r2, 1
ja j3
a3:
mov %r2, 1
j3:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 4, a4
mov %r2, 1
ja j4
a4:
mov %r2, 1
j4:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 5, a5
mov %r2, 1
ja j5
a5:
mov %r2, 1
j5:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 6, a6
mov %r2, 1
ja j6
a6:
mov %r2, 1
j6:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 7, a7
mov %r2, 1
ja j7
a7:
mov %r2, 1
j7:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 8, a8
mov %r2, 1
ja j8
a8:
mov %r2, 1
j8:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 9, a9
mov %r2, 1
ja j9
a9:
mov %r2, 1
j9:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 10, a10
mov %r2, 1
ja j10
a10:
mov %r2, 1
j10:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 11, a11
mov %r2, 1
ja j11
a11:
mov %r2, 1
j11:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 12, a12
mov %r2, 1
ja j12
a12:
mov %r2, 1
j12:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 13, a13
mov %r2, 1
ja j13
a13:
mov %r2, 1
j13:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 14, a14
mov %r2, 1
ja j14
a14:
mov %r2, 1
j14:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 15, a15
mov %r2, 1
ja j15
a15:
mov %r2, 1
j15:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 16, a16
mov %r2, 1
ja j16
a16:
mov %r2, 1
j16:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 17, a17
mov %r2, 1
ja j17
a17:
mov %r2, 1
j17:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 18, a18
mov %r2, 1
ja j18
a18:
mov %r2, 1
j18:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 19, a19
mov %r2, 1
ja j19
a19:
mov %r2, 1
j19:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 20, a20
mov %r2, 1
ja j20
a20:
mov %r2, 1
j20:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 21, a21
mov %r2, 1
ja j21
a21:
mov %r2, 1
j21:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 22, a22
mov %r2, 1
ja j22
a22:
mov %r2, 1
j22:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 23, a23
mov %r2, 1
ja j23
a23:
mov %r2, 1
j23:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 24, a24
mov %r2, 1
ja j24
a24:
mov %r2, 1
j24:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 25, a25
mov %r2, 1
ja j25
a25:
mov %r2, 1
j25:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 26, a26
mov %r2, 1
ja j26
a26:
mov %r2, 1
j26:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 27, a27
mov %r2, 1
ja j27
a27:
mov %r2, 1
j27:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 28, a28
mov %r2, 1
ja j28
a28:
mov %r2, 1
j28:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 29, a29
mov %r2, 1
ja j29
a29:
mov %r2, 1
j29:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 30, a30
mov %r2, 1
ja j30
a30:
mov %r2, 1
j30:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 31, a31
mov %r2, 1
ja j31
a31:
mov %r2, 1
j31:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 32, a32
mov %r2, 1
ja j32
a32:
mov %r2, 1
j32:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 33, a33
mov %r2, 1
ja j33
a33:
mov %r2, 1
j33:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 34, a34
mov %r2, 1
ja j34
a34:
mov %r2, 1
j34:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 35, a35
mov %r2, 1
ja j35
a35:
mov %r2, 1
j35:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 36, a36
mov %r2, 1
ja j36
a36:
mov %r2, 1
j36:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 37, a37
mov %r2, 1
ja j37
a37:
mov %r2, 1
j37:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 38, a38
mov %r2, 1
ja j38
a38:
mov %r2, 1
j38:
add %r0, %r2
ldxw %r3, [%r6+12]
jgt %r3, 39, a39
mov %r2, 1
ja j39
a39:
mov %r2, 1
j39:
add %r0, %r2
exit
