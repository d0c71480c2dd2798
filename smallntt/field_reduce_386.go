package smallntt

import "math/bits"

// Reduce returns a mod P. a any; output canonical. The form of
// field_reduce.go compiles on 386 to a branch on whether a's high word is
// all ones, and Reduce meets products with the secret key in encryption
// (field.go, Neg's comment): here the subtraction's borrow picks the case
// as a mask, with the same results.
func Reduce(a uint64) uint64 {
	d, br := bits.Sub64(a, P, 0)
	return d + P&-br
}

// reduceByMask: see field_reduce.go.
const reduceByMask = true
