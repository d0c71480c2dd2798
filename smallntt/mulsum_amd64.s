//go:build amd64 && !purego

#include "textflag.h"

// func mulSumAsm(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)
//
// MulSum (mulsum.go) with MULX: for each j, the rows' 128-bit products are
// summed in R13 (lo), R14 (hi), R15 (top), two rows per iteration, then
// reduced once: lo + 2^64·hi + 2^128·top ≡ lo − (hh + 2^32·top) + ε·hl
// (hi = 2^32·hh + hl, 2^128 ≡ −2^32, DESIGN.md §3). A borrow out of the
// subtraction is fixed by −ε and a carry out of the addition by +ε (neither
// fix can wrap again), and a final conditional −P makes the result
// canonical: r ≥ P exactly when r + ε carries.
//
// Registers: DI dst, SI and BX the j-th elements of x's and y's row 0, R8 and
// R9 the strides in bytes, R10 and R11 the current rows, CX rows left.
TEXT ·mulSumAsm(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), BX
	MOVQ xStride+24(FP), R8
	MOVQ yStride+32(FP), R9

loop:
	MOVQ SI, R10
	MOVQ BX, R11
	XORQ R13, R13
	XORQ R14, R14
	XORQ R15, R15
	MOVQ rows+40(FP), CX
	CMPQ CX, $2
	JLT  one

pair:
	MOVQ  (R10), DX
	MULXQ (R11), AX, R12
	ADDQ  AX, R13
	ADCQ  R12, R14
	ADCQ  $0, R15
	MOVQ  (R10)(R8*1), DX
	MULXQ (R11)(R9*1), AX, R12
	ADDQ  AX, R13
	ADCQ  R12, R14
	ADCQ  $0, R15
	LEAQ  (R10)(R8*2), R10
	LEAQ  (R11)(R9*2), R11
	SUBQ  $2, CX
	CMPQ  CX, $2
	JGE   pair

one:
	TESTQ CX, CX
	JZ    reduce
	MOVQ  (R10), DX
	MULXQ (R11), AX, R12
	ADDQ  AX, R13
	ADCQ  R12, R14
	ADCQ  $0, R15

reduce:
	// AX = hh + 2^32·top (< 2^64 for top < 2^32 − 1)
	MOVQ R14, AX
	SHRQ $32, AX
	SHLQ $32, R15
	ADDQ R15, AX

	// R14 = hl·ε = (hl << 32) − hl
	MOVL R14, R12
	SHLQ $32, R14
	SUBQ R12, R14

	// R13 = lo − AX, −ε on borrow
	SUBQ AX, R13
	SBBQ AX, AX
	SHRQ $32, AX
	SUBQ AX, R13

	// R13 += hl·ε, +ε on carry
	ADDQ R14, R13
	SBBQ AX, AX
	SHRQ $32, AX
	ADDQ AX, R13

	// canonical: −P (that is, +ε mod 2^64) when R13 + ε carries
	MOVL    $0xffffffff, AX
	ADDQ    R13, AX
	CMOVQCS AX, R13

	MOVQ R13, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	ADDQ $8, BX
	DECQ n+48(FP)
	JNZ  loop
	RET

DATA ·mulSumSign+0(SB)/8, $0x8000000000000000
DATA ·mulSumSign+8(SB)/8, $0x8000000000000000
DATA ·mulSumSign+16(SB)/8, $0x8000000000000000
DATA ·mulSumSign+24(SB)/8, $0x8000000000000000
GLOBL ·mulSumSign(SB), RODATA|NOPTR, $32

DATA ·mulSumEps+0(SB)/8, $0xffffffff
DATA ·mulSumEps+8(SB)/8, $0xffffffff
DATA ·mulSumEps+16(SB)/8, $0xffffffff
DATA ·mulSumEps+24(SB)/8, $0xffffffff
GLOBL ·mulSumEps(SB), RODATA|NOPTR, $32

// (P − 1) ^ 2^63: x ≥ P exactly when x ^ 2^63 > this, signed.
DATA ·mulSumPm1s+0(SB)/8, $0x7fffffff00000000
DATA ·mulSumPm1s+8(SB)/8, $0x7fffffff00000000
DATA ·mulSumPm1s+16(SB)/8, $0x7fffffff00000000
DATA ·mulSumPm1s+24(SB)/8, $0x7fffffff00000000
GLOBL ·mulSumPm1s(SB), RODATA|NOPTR, $32

// func mulSumAVX2(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)
//
// MulSum four outputs at a time (n a multiple of 4, 1 ≤ rows ≤ 64). With
// a = 2^32·a1 + a0 and b = 2^32·b1 + b0, a·b = a0b0 + 2^32·(a0b1 + a1b0) +
// 2^64·a1b1, four VPMULUDQ products below 2^64. For each of the three
// groups g the lanes keep S_g, the sum of its products mod 2^64, and H_g,
// the exact sum of their high halves; the exact sum of their low halves is
// then L_g = S_g − 2^32·H_g (mod 2^64, exact: below 2·rows·2^32). So
//
//	Σ a·b = A0 + 2^32·A1 + 2^64·A2 + 2^96·A3,
//	A0 = L_0, A1 = H_0 + L_1, A2 = H_1 + L_2, A3 = H_2   (each < 2^41)
//
// and with 2^64 ≡ ε, 2^96 ≡ −1 (DESIGN.md §3) and B = A1 + A2 =
// 2^32·Bh + Bl: Σ ≡ 2^32·Bl + (A0 + ε·Bh) − (A2 + A3). The sum takes +ε
// on a carry, the difference −ε on a borrow (neither can wrap again), and
// a final −P makes it canonical.
//
// Registers: Y0–Y2 S_0..S_2, Y3–Y5 H_0..H_2, Y6–Y13 scratch, Y14 2^63,
// Y15 ε; DI dst, SI and BX x and y at the current column, R8/R9 strides,
// R10/R11 the current rows, CX rows left, DX outputs left.
TEXT ·mulSumAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), BX
	MOVQ xStride+24(FP), R8
	MOVQ yStride+32(FP), R9
	MOVQ n+48(FP), DX
	VMOVDQU ·mulSumSign(SB), Y14
	VMOVDQU ·mulSumEps(SB), Y15

avxloop:
	MOVQ SI, R10
	MOVQ BX, R11
	MOVQ rows+40(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5

avxrow:
	VMOVDQU  (R10), Y6
	VMOVDQU  (R11), Y7
	VPSRLQ   $32, Y6, Y8
	VPSRLQ   $32, Y7, Y9
	VPMULUDQ Y7, Y6, Y10 // a0b0
	VPMULUDQ Y9, Y6, Y11 // a0b1
	VPMULUDQ Y7, Y8, Y12 // a1b0
	VPMULUDQ Y9, Y8, Y13 // a1b1
	VPADDQ   Y10, Y0, Y0
	VPSRLQ   $32, Y10, Y10
	VPADDQ   Y10, Y3, Y3
	VPADDQ   Y11, Y1, Y1
	VPSRLQ   $32, Y11, Y11
	VPADDQ   Y11, Y4, Y4
	VPADDQ   Y12, Y1, Y1
	VPSRLQ   $32, Y12, Y12
	VPADDQ   Y12, Y4, Y4
	VPADDQ   Y13, Y2, Y2
	VPSRLQ   $32, Y13, Y13
	VPADDQ   Y13, Y5, Y5
	ADDQ     R8, R10
	ADDQ     R9, R11
	DECQ     CX
	JNZ      avxrow

	// L_g = S_g − 2^32·H_g into Y0..Y2
	VPSLLQ $32, Y3, Y6
	VPSUBQ Y6, Y0, Y0
	VPSLLQ $32, Y4, Y6
	VPSUBQ Y6, Y1, Y1
	VPSLLQ $32, Y5, Y6
	VPSUBQ Y6, Y2, Y2
	VPADDQ Y3, Y1, Y1 // A1
	VPADDQ Y4, Y2, Y2 // A2
	// Y6 = B = A1 + A2, Y7 = 2^32·Bl, Y8 = Bh
	VPADDQ Y2, Y1, Y6
	VPSLLQ $32, Y6, Y7
	VPSRLQ $32, Y6, Y8
	// Y0 = A0 + ε·Bh
	VPSLLQ $32, Y8, Y9
	VPSUBQ Y8, Y9, Y9
	VPADDQ Y9, Y0, Y0
	// Y2 = A2 + A3
	VPADDQ Y5, Y2, Y2
	// Y9 = 2^32·Bl + Y0, +ε on carry (Y7 >u Y9)
	VPADDQ   Y0, Y7, Y9
	VPXOR    Y14, Y7, Y10
	VPXOR    Y14, Y9, Y11
	VPCMPGTQ Y11, Y10, Y10
	VPAND    Y15, Y10, Y10
	VPADDQ   Y10, Y9, Y9
	// Y10 = Y9 − Y2, −ε on borrow (Y2 >u Y9)
	VPSUBQ   Y2, Y9, Y10
	VPXOR    Y14, Y2, Y11
	VPXOR    Y14, Y9, Y12
	VPCMPGTQ Y12, Y11, Y11
	VPAND    Y15, Y11, Y11
	VPSUBQ   Y11, Y10, Y10
	// canonical: +ε (≡ −P) when Y10 ≥ P
	VPXOR    Y14, Y10, Y11
	VPCMPGTQ ·mulSumPm1s(SB), Y11, Y11
	VPAND    Y15, Y11, Y11
	VPADDQ   Y11, Y10, Y10
	VMOVDQU  Y10, (DI)

	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, BX
	SUBQ $4, DX
	JNZ  avxloop
	VZEROUPPER
	RET

DATA ·mulSumEpsQ+0(SB)/8, $0xffffffff
GLOBL ·mulSumEpsQ(SB), RODATA|NOPTR, $8

DATA ·mulSumPQ+0(SB)/8, $0xffffffff00000001
GLOBL ·mulSumPQ(SB), RODATA|NOPTR, $8

// func mulSumIFMA(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)
//
// MulSum eight outputs at a time with AVX-512 IFMA (n a multiple of 8,
// 1 ≤ rows ≤ 64). With a = a0 + 2^52·a1 and b = b0 + 2^52·b1 (a1, b1 <
// 2^12; VPMADD52*UQ read bits 0–51 of a and b, so a0 and b0 need no mask),
// a·b = a0b0 + 2^52·(a0b1 + a1b0) + 2^104·a1b1, and each 104-bit product
// splits into its low 52 bits (VPMADD52LUQ) and the rest (VPMADD52HUQ),
// added to
//
//	A0 (weight 1):      lo(a0b0)                          < 2^52 per row
//	A1 (weight 2^52):   hi(a0b0), lo(a0b1), lo(a1b0)      three accumulators
//	A2 (weight 2^104):  hi(a0b1), hi(a1b0), lo(a1b1)      < 2^12, 2^12, 2^24
//
// exactly, without carries, for up to 64 rows: A0 < 2^58, A1 < 2^60,
// A2 < 2^31. Seven accumulators (Z0–Z6), one product each per row, so that
// no chain of dependent VPMADD52 limits the loop. Then, with 2^96 ≡ −1
// (DESIGN.md §3), 2^104 ≡ −2^8 and A1·2^52 = lo + 2^64·(2^32·hh + hl)
// (lo = A1 << 52, hi = A1 >> 12 < 2^48, hh = hi >> 32):
//
//	Σ a·b ≡ (lo + A0) + ε·hl − (hh + 2^8·A2)
//
// each sum taking +ε on a carry and the difference −ε on a borrow (none can
// wrap again: lo + A0 − 2^64 + ε < 2^59, then ε·hl < 2^64 − 2^33, and
// hh + 2^8·A2 < 2^40), and min(v, v − P) makes it canonical (v − P wraps
// above v exactly when v < P).
//
// Registers: Z0–Z6 accumulators, Z7–Z10 a, a1, b, b1, Z11–Z13 scratch,
// Z14 P, Z15 ε; DI dst, SI and BX x and y at the current column, R8/R9
// strides, R10/R11 the current rows, CX rows left, DX outputs left.
TEXT ·mulSumIFMA(SB), NOSPLIT, $0-56
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), BX
	MOVQ         xStride+24(FP), R8
	MOVQ         yStride+32(FP), R9
	MOVQ         n+48(FP), DX
	VPBROADCASTQ ·mulSumPQ(SB), Z14
	VPBROADCASTQ ·mulSumEpsQ(SB), Z15

ifmaloop:
	MOVQ   SI, R10
	MOVQ   BX, R11
	MOVQ   rows+40(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6

ifmarow:
	VMOVDQU64   (R10), Z7
	VMOVDQU64   (R11), Z9
	VPSRLQ      $52, Z7, Z8
	VPSRLQ      $52, Z9, Z10
	VPMADD52LUQ Z9, Z7, Z0  // A0 += lo(a0b0)
	VPMADD52HUQ Z9, Z7, Z1  // A1 += hi(a0b0)
	VPMADD52LUQ Z10, Z7, Z2 // A1 += lo(a0b1)
	VPMADD52LUQ Z9, Z8, Z3  // A1 += lo(a1b0)
	VPMADD52HUQ Z10, Z7, Z4 // A2 += hi(a0b1)
	VPMADD52HUQ Z9, Z8, Z5  // A2 += hi(a1b0)
	VPMADD52LUQ Z10, Z8, Z6 // A2 += lo(a1b1)
	ADDQ        R8, R10
	ADDQ        R9, R11
	DECQ        CX
	JNZ         ifmarow

	VPADDQ Z2, Z1, Z1
	VPADDQ Z3, Z1, Z1 // A1
	VPADDQ Z5, Z4, Z4
	VPADDQ Z6, Z4, Z4 // A2

	// Z11 = lo + A0, +ε on carry (lo >u Z11)
	VPSLLQ  $52, Z1, Z12
	VPADDQ  Z0, Z12, Z11
	VPCMPUQ $1, Z12, Z11, K1
	VPADDQ  Z15, Z11, K1, Z11

	// Z11 += ε·hl, +ε on carry
	VPSRLQ   $12, Z1, Z1 // hi
	VPMULUDQ Z15, Z1, Z12
	VPADDQ   Z12, Z11, Z13
	VPCMPUQ  $1, Z11, Z13, K1
	VPADDQ   Z15, Z13, K1, Z13

	// Z13 −= hh + 2^8·A2, −ε on borrow
	VPSRLQ  $32, Z1, Z1
	VPSLLQ  $8, Z4, Z4
	VPADDQ  Z4, Z1, Z1
	VPCMPUQ $1, Z1, Z13, K2
	VPSUBQ  Z1, Z13, Z13
	VPSUBQ  Z15, Z13, K2, Z13

	// canonical
	VPSUBQ    Z14, Z13, Z12
	VPMINUQ   Z12, Z13, Z13
	VMOVDQU64 Z13, (DI)

	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, BX
	SUBQ $8, DX
	JNZ  ifmaloop
	VZEROUPPER
	RET
