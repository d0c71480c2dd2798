package gates

import (
	"math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// BenchmarkDistinctInputs is what distinctInputs adds to a batch of 65,536
// gate bootstraps of TFHELib128 (n = 630), all inputs distinct, past their
// fingerprints (BenchmarkFingerprintHot, each).
func BenchmarkDistinctInputs(b *testing.B) {
	const count = 65536
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]*tfhe.TLWE, count)
	for i := range xs {
		xs[i] = tfhe.NewTLWE(630)
		for j := range xs[i].Value {
			xs[i].Value[j] = torus.Torus32(rng.Uint32())
		}
	}
	var s batchScratch
	keys := s.sites(count)
	for i, x := range xs {
		keys[i] = inputFingerprint(x.Value)
	}
	for b.Loop() {
		s.distinctInputs(xs, nil, nil, nil)
	}
}

// BenchmarkFingerprintHot is inputFingerprint of a sample in cache, as
// batch takes it right after forming the sample.
func BenchmarkFingerprintHot(b *testing.B) {
	x := tfhe.NewTLWE(630)
	var sink uint64
	for b.Loop() {
		sink += inputFingerprint(x.Value)
	}
	_ = sink
}

// BenchmarkReduceCalls is what a pass of its own looking for repeated
// samples would add to a batch of 65,536 two-input gates of TFHELib128
// with distinct inputs (the samples out of cache, as in a large batch);
// batch looks as it reads each call's inputs instead.
func BenchmarkReduceCalls(b *testing.B) {
	const count = 65536
	rng := rand.New(rand.NewPCG(1, 2))
	calls := make([]Call, count)
	for i := range calls {
		x, y := tfhe.NewTLWE(630), tfhe.NewTLWE(630)
		for j := range x.Value {
			x.Value[j], y.Value[j] = torus.Torus32(rng.Uint32()), torus.Torus32(rng.Uint32())
		}
		calls[i] = Call{Op: OpAND, A: x, B: y}
	}
	for b.Loop() {
		reduceCalls(calls)
	}
}
