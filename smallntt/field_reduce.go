//go:build !386

package smallntt

// Reduce returns a mod P. a any; output canonical. (A mask form, a +
// P&−borrow of bits.Sub64, runs as a longer dependent chain: the pure-Go
// NTT was about 30% slower with it. On amd64 and arm64 this compiles to a
// conditional move; 386 compares 64-bit values with a branch on the high
// words, so there Reduce is field_reduce_386.go's mask form.)
func Reduce(a uint64) uint64 {
	if a >= P {
		a -= P
	}
	return a
}

// reduceByMask reports that Reduce is a mask (field_reduce_386.go). Add,
// Mul and shlMidC write their final conditional subtraction out, as
// Reduce's form here, and call Reduce where reduceByMask is set: an
// inlined call of Reduce instead gives the compiler other register
// choices, and the Go kernels of 32 points ran some 35% slower on amd64.
// (The branch of a constant is pruned before inlining.)
const reduceByMask = false
