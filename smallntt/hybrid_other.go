//go:build !amd64 || purego

package smallntt

// Without assembly the Hybrid variant runs the Go kernels only.

const haveAVX2 = false

var useAVX2 = false

const haveAVX512 = false

var useAVX512 = false

func accelCol(f int, twisted, inverse bool) colKernel { return nil }

func accelLast(f int, inverse bool) func(a []uint64) { return nil }

func accelDigits(f int) digitKernel { return nil }

func accelLastPrefetch(f int) func(a, pf []uint64) []uint64 { return nil }
