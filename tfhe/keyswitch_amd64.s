//go:build amd64 && !purego

#include "textflag.h"

// func ksAccumulate(acc *uint32, w int, table *uint32, rows *int64, count int)
//
// For each entry o of rows: acc −= row at table + o (o even) or acc +=
// row at table + (o − 1) (o odd), eight words per AVX2 instruction and the
// w mod 8 last ones one by one. Before each row it prefetches the first
// 16 cache lines of the row two entries ahead (the hardware prefetcher
// follows a row once it has started on it).
//
// Registers: DI acc, CX w, SI table, BX the current entry, DX entries left,
// R8 the row, R9 words done, R10 scratch, R11 w &^ 7.
TEXT ·ksAccumulate(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), CX
	MOVQ table+16(FP), SI
	MOVQ rows+24(FP), BX
	MOVQ count+32(FP), DX
	MOVQ CX, R11
	ANDQ $-8, R11

row:
	// prefetch the row two entries ahead, if any
	CMPQ DX, $2
	JLE  noprefetch
	MOVQ 16(BX), R10
	ANDQ $-2, R10
	ADDQ SI, R10
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	PREFETCHT0 128(R10)
	PREFETCHT0 192(R10)
	PREFETCHT0 256(R10)
	PREFETCHT0 320(R10)
	PREFETCHT0 384(R10)
	PREFETCHT0 448(R10)
	PREFETCHT0 512(R10)
	PREFETCHT0 576(R10)
	PREFETCHT0 640(R10)
	PREFETCHT0 704(R10)
	PREFETCHT0 768(R10)
	PREFETCHT0 832(R10)
	PREFETCHT0 896(R10)
	PREFETCHT0 960(R10)

noprefetch:
	MOVQ (BX), R8
	XORQ R9, R9
	TESTQ $1, R8
	JNZ  add
	ADDQ SI, R8
	CMPQ R11, $0
	JEQ  subtail

subvec:
	VMOVDQU (DI)(R9*4), Y0
	VPSUBD  (R8)(R9*4), Y0, Y0
	VMOVDQU Y0, (DI)(R9*4)
	ADDQ    $8, R9
	CMPQ    R9, R11
	JLT     subvec

subtail:
	CMPQ R9, CX
	JGE  next
	MOVL (R8)(R9*4), R10
	SUBL R10, (DI)(R9*4)
	INCQ R9
	JMP  subtail

add:
	ANDQ $-2, R8
	ADDQ SI, R8
	CMPQ R11, $0
	JEQ  addtail

addvec:
	VMOVDQU (DI)(R9*4), Y0
	VPADDD  (R8)(R9*4), Y0, Y0
	VMOVDQU Y0, (DI)(R9*4)
	ADDQ    $8, R9
	CMPQ    R9, R11
	JLT     addvec

addtail:
	CMPQ R9, CX
	JGE  next
	MOVL (R8)(R9*4), R10
	ADDL R10, (DI)(R9*4)
	INCQ R9
	JMP  addtail

next:
	ADDQ $8, BX
	DECQ DX
	JNZ  row
	VZEROUPPER
	RET
