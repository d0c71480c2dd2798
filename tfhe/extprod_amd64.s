//go:build amd64 && !purego

#include "textflag.h"

DATA ·tfheSign+0(SB)/8, $0x8000000000000000
DATA ·tfheSign+8(SB)/8, $0x8000000000000000
DATA ·tfheSign+16(SB)/8, $0x8000000000000000
DATA ·tfheSign+24(SB)/8, $0x8000000000000000
GLOBL ·tfheSign(SB), RODATA|NOPTR, $32

// (P−1)/2 ^ 2^63: v > (P−1)/2 exactly when v ^ 2^63 > this, signed.
DATA ·tfheHalfS+0(SB)/8, $0xffffffff80000000
DATA ·tfheHalfS+8(SB)/8, $0xffffffff80000000
DATA ·tfheHalfS+16(SB)/8, $0xffffffff80000000
DATA ·tfheHalfS+24(SB)/8, $0xffffffff80000000
GLOBL ·tfheHalfS(SB), RODATA|NOPTR, $32

// func centeredAVX2(out *uint32, a *uint64, n int, add bool)
//
// out[j] = (or +=) centered(a[j]) mod 2^32 for canonical a[j], n a positive
// multiple of 8: the low half of a[j], minus 1 when a[j] > (P−1)/2 (the
// centered value is then a[j] − P ≡ a[j] − 1, P ≡ 1 mod 2^32). The compare
// mask (−1) is added to the whole lane, whose low half is kept; VSHUFPS and
// VPERMQ pack the low halves of eight lanes into one vector.
TEXT ·centeredAVX2(SB), NOSPLIT, $0-25
	MOVQ    out+0(FP), DI
	MOVQ    a+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVBQZX add+24(FP), DX
	VMOVDQU ·tfheSign(SB), Y15
	VMOVDQU ·tfheHalfS(SB), Y14

cloop:
	VMOVDQU  (SI), Y0
	VMOVDQU  32(SI), Y1
	VPXOR    Y15, Y0, Y2
	VPCMPGTQ Y14, Y2, Y2
	VPADDQ   Y2, Y0, Y0
	VPXOR    Y15, Y1, Y3
	VPCMPGTQ Y14, Y3, Y3
	VPADDQ   Y3, Y1, Y1
	VSHUFPS  $0x88, Y1, Y0, Y4
	VPERMQ   $0xd8, Y4, Y4
	TESTQ    DX, DX
	JZ       cstore
	VPADDD   (DI), Y4, Y4

cstore:
	VMOVDQU Y4, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     cloop
	VZEROUPPER
	RET

// func diffAVX2(dst, x, y *uint32, n int, neg bool, off uint32)
//
// dst[j] = x[j] − y[j] + off, or −x[j] − y[j] + off when neg, mod 2^32,
// for n a positive multiple of 8.
TEXT ·diffAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), BX
	MOVQ         n+24(FP), CX
	MOVBQZX      neg+32(FP), DX
	MOVL         off+36(FP), AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	TESTQ        DX, DX
	JNZ          dneg

dpos:
	VMOVDQU (SI), Y0
	VPSUBD  (BX), Y0, Y0
	VPADDD  Y15, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     dpos
	VZEROUPPER
	RET

dneg:
	VMOVDQU (SI), Y0
	VPADDD  (BX), Y0, Y0
	VPSUBD  Y0, Y15, Y0
	VMOVDQU Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     dneg
	VZEROUPPER
	RET
