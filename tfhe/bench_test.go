package tfhe

import (
	"fmt"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

func benchName(p Params, plan *smallntt.Plan) string { return p.Name() + "/" + plan.String() }

// benchPlans are the plans the benchmarks compare: the butterfly baseline
// and smallntt's default (fastest measured) plan.
func benchPlans(b *testing.B, n int) []*smallntt.Plan {
	def, err := smallntt.DefaultPlan(n)
	require.NoError(b, err)
	return []*smallntt.Plan{butterfly(b, n), def}
}

// BenchmarkNTT measures the transforms as the external product uses them,
// for reference next to the TFHE operations.
func BenchmarkNTT(b *testing.B) {
	for _, plan := range benchPlans(b, 1024) {
		x := make(smallntt.NTTPoly, 1024)
		for i := range x {
			x[i] = uint64(i)
		}
		b.Run("Forward/"+plan.String(), func(b *testing.B) {
			for b.Loop() {
				plan.Forward(x, smallntt.Poly(x))
			}
		})
		b.Run("Inverse/"+plan.String(), func(b *testing.B) {
			for b.Loop() {
				plan.Inverse(smallntt.Poly(x), x)
			}
		})
		b.Run("MulAdd/"+plan.String(), func(b *testing.B) {
			for b.Loop() {
				plan.MulAdd(x, x, x)
			}
		})
	}
}

func evaluatorWith(b *testing.B, p Params, plan *smallntt.Plan, withKeys bool) *Evaluator {
	var ck *CloudKey
	if withKeys {
		ck = testKeys(p).ck
	}
	e, err := NewEvaluator(p, plan, ck)
	require.NoError(b, err)
	return e
}

func BenchmarkExternalProduct(b *testing.B) {
	for _, p := range ParamSets() {
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := evaluatorWith(b, p, plan, false)
			kp := testKeys(p)
			enc := newEncryptor(b, kp.sk, 1)
			c, _ := NewNTTTRGSW(e.Plan(), enc.EncryptTRGSW(1))
			src := enc.EncryptTRLWE(torus.NewPoly(p.PolyDegree()))
			dst := NewTRLWE(p.GLWEDimension(), p.PolyDegree())
			b.Run(benchName(p, e.Plan()), func(b *testing.B) {
				for b.Loop() {
					e.ExternalProductTo(dst, c, src)
				}
			})
		}
	}
}

func BenchmarkCMux(b *testing.B) {
	for _, p := range ParamSets() {
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := evaluatorWith(b, p, plan, false)
			kp := testKeys(p)
			enc := newEncryptor(b, kp.sk, 1)
			c, _ := NewNTTTRGSW(e.Plan(), enc.EncryptTRGSW(1))
			d0 := enc.EncryptTRLWE(torus.NewPoly(p.PolyDegree()))
			d1 := enc.EncryptTRLWE(torus.NewPoly(p.PolyDegree()))
			dst := NewTRLWE(p.GLWEDimension(), p.PolyDegree())
			b.Run(benchName(p, e.Plan()), func(b *testing.B) {
				for b.Loop() {
					e.CMuxTo(dst, c, d0, d1)
				}
			})
		}
	}
}

func BenchmarkBlindRotate(b *testing.B) {
	for _, p := range ParamSets() {
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := evaluatorWith(b, p, plan, true)
			enc := newEncryptor(b, testKeys(p).sk, 1)
			ct := enc.EncryptBool(true)
			tv := torus.NewPoly(p.PolyDegree())
			acc := NewTRLWE(p.GLWEDimension(), p.PolyDegree())
			b.Run(benchName(p, e.Plan()), func(b *testing.B) {
				for b.Loop() {
					e.BlindRotateTo(acc, ct, tv)
				}
			})
		}
	}
}

func BenchmarkKeySwitch(b *testing.B) {
	for _, p := range ParamSets() {
		e := newEvaluator(b, p, true)
		enc := newEncryptor(b, testKeys(p).sk, 1)
		in := NewTLWE(p.ExtractedLWEDimension())
		enc.EncryptExtractedTLWETo(in, 1<<29, p.BKStdDev())
		out := NewTLWE(p.LWEDimension())
		b.Run(p.Name(), func(b *testing.B) {
			for b.Loop() {
				e.KeySwitchTo(out, in)
			}
		})
	}
}

func BenchmarkBootstrap(b *testing.B) {
	for _, p := range ParamSets() {
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := evaluatorWith(b, p, plan, true)
			enc := newEncryptor(b, testKeys(p).sk, 1)
			ct := enc.EncryptBool(true)
			out := NewTLWE(p.LWEDimension())
			b.Run(benchName(p, e.Plan()), func(b *testing.B) {
				for b.Loop() {
					e.BootstrapTo(out, ct, 1<<29)
				}
			})
		}
	}
}

func BenchmarkKeyGen(b *testing.B) {
	for _, p := range ParamSets() {
		sk, _ := GenerateSecretKeyFromSeed(p, seedOf("kg", 0))
		b.Run(p.Name(), func(b *testing.B) {
			for b.Loop() {
				GenerateCloudKeyFromSeed(sk, seedOf("kg", 1))
			}
		})
	}
}

// BenchmarkCompressedExpand measures what a server spends on receiving a
// compressed cloud key: Expand, the masks regenerated from the seed (all
// cores), plain and grouped by 3.
func BenchmarkCompressedExpand(b *testing.B) {
	for _, p := range ParamSets() {
		sk, err := GenerateSecretKeyFromSeed(p, seedOf("kg", 0))
		require.NoError(b, err)
		for _, g := range []int{1, 3} {
			c, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("kg", 2), WithGrouping(g))
			require.NoError(b, err)
			b.Run(fmt.Sprintf("%s/g%d", p.Name(), g), func(b *testing.B) {
				for b.Loop() {
					if _, err := c.Expand(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
