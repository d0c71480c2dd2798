//go:build !amd64 || purego

package tfhe

// Without assembly toTorus and rotDiff run their Go loops.

var useVecAsm = false

func centeredAVX2(out *uint32, a *uint64, n int, add bool) { panic("tfhe: no assembly") }

func diffAVX2(dst, x, y *uint32, n int, neg bool, off uint32) { panic("tfhe: no assembly") }
