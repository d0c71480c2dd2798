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
