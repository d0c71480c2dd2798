//go:build amd64 && !purego

package tfhe

// useVecAsm selects the AVX2 loops of extprod_amd64.s (toTorus, rotDiff);
// tests turn it off to compare with the Go loops.
var useVecAsm = haveAVX2

// centeredAVX2 is toTorus's loop for n a positive multiple of 8.
//
//go:noescape
func centeredAVX2(out *uint32, a *uint64, n int, add bool)

// diffAVX2 is rotDiff's loop for n a positive multiple of 8.
//
//go:noescape
func diffAVX2(dst, x, y *uint32, n int, neg bool, off uint32)
