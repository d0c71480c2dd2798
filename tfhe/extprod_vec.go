package tfhe

import (
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// toTorus sets (add = false) or adds (add = true) to out[j] the centered
// value of the canonical residue a[j] (smallntt.ToInt64Centered) mod 2^32,
// for j < len(a): the last step of an external product. On amd64 with AVX2
// eight at a time (extprod_amd64.s), the rest in Go; the same bits
// (TestVecKernels).
func toTorus(out []torus.Torus32, a []uint64, add bool) {
	out = out[:len(a)]
	done := 0
	if useVecAsm {
		if done = len(a) &^ 7; done > 0 {
			centeredAVX2((*uint32)(&out[0]), &a[0], done, add)
		}
	}
	out, a = out[done:], a[done:len(out)]
	if add {
		for j, v := range a {
			out[j] += torus.Torus32(smallntt.ToInt64Centered(v))
		}
	} else {
		for j, v := range a {
			out[j] = torus.Torus32(smallntt.ToInt64Centered(v))
		}
	}
}

// rotDiff sets dst[j] = uint32(x[j] − y[j]) + off, or uint32(−x[j] − y[j])
// + off when neg, for j < len(dst) (x and y at least as long): one segment
// of blind rotation's X^a·ACC − ACC plus the gadget offset. AVX2 as
// toTorus.
func rotDiff(dst []uint32, x, y []torus.Torus32, neg bool, off uint32) {
	x, y = x[:len(dst)], y[:len(dst)]
	done := 0
	if useVecAsm {
		if done = len(dst) &^ 7; done > 0 {
			diffAVX2(&dst[0], (*uint32)(&x[0]), (*uint32)(&y[0]), done, neg, off)
		}
	}
	dst, x, y = dst[done:], x[done:len(dst)], y[done:len(dst)]
	if neg {
		for j := range dst {
			dst[j] = uint32(-x[j]-y[j]) + off
		}
	} else {
		for j := range dst {
			dst[j] = uint32(x[j]-y[j]) + off
		}
	}
}
