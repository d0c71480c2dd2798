package tfhe

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// refDecompose is an independent formulation of the gadget decomposition:
// round a to l·β bits, then take balanced base-B digits from the least
// significant end.
func refDecompose(a torus.Torus32, l, beta int) []int32 {
	lb := uint(l * beta)
	var r uint64
	if lb == 32 {
		r = uint64(a)
	} else {
		r = (uint64(a) + 1<<(31-lb)) >> (32 - lb) & (1<<lb - 1)
	}
	B := int64(1) << beta
	d := make([]int32, l)
	x := int64(r)
	for i := l - 1; i >= 0; i-- {
		v := x % B
		if v >= B/2 {
			v -= B
		}
		d[i] = int32(v)
		x = (x - v) / B
	}
	return d
}

func TestGadgetDecompose(t *testing.T) {
	r := mrand.New(mrand.NewPCG(11, 12))
	vals := []torus.Torus32{0, 1, 1 << 31, 1<<31 - 1, 1<<32 - 1, 1 << 10, 1<<10 - 1, 3 << 9}
	for range 3000 {
		vals = append(vals, torus.Torus32(r.Uint32()))
	}
	for _, lb := range [][2]int{{3, 7}, {2, 10}, {1, 18}, {5, 3}, {8, 2}, {4, 8}, {1, 32}, {32, 1}, {2, 16}} {
		g, err := NewGadget(lb[0], lb[1])
		require.NoError(t, err)
		d := make([]int32, g.Levels())
		half := int64(1) << (g.BaseLog() - 1)
		for _, a := range vals {
			g.Decompose(d, a)
			want := refDecompose(a, lb[0], lb[1])
			for i := range d {
				if d[i] != want[i] {
					t.Fatalf("l=%d β=%d: Decompose(%#x) = %v, want %v", lb[0], lb[1], a, d, want)
				}
				if int64(d[i]) < -half || int64(d[i]) >= half {
					t.Fatalf("digit %d out of range", d[i])
				}
			}
			err := int64(int32(a - g.Recompose(d)))
			// Ties round up: the error lies in [−2^{31−lβ}, 2^{31−lβ}).
			if lb[0]*lb[1] < 32 && (err >= 1<<(31-lb[0]*lb[1]) || err < -(1<<(31-lb[0]*lb[1]))) {
				t.Fatalf("l=%d β=%d: recomposition error %d for %#x", lb[0], lb[1], err, a)
			}
			if lb[0]*lb[1] == 32 && err != 0 {
				t.Fatalf("l·β = 32 must be exact")
			}
		}
	}
	if _, err := NewGadget(3, 11); err == nil {
		t.Fatal("l·β = 33 accepted")
	}
}

// TestNewGadgetOverflow checks that levels and bits whose product wraps an
// int are refused with NewGadget's error: math.MaxInt·2 wraps to −2, which
// passed the check and panicked on a negative shift in gadgetOffset.
func TestNewGadgetOverflow(t *testing.T) {
	for _, lb := range [][2]int{{math.MaxInt, 2}, {2, math.MaxInt}, {math.MaxInt/2 + 1, 2}, {math.MaxInt/4 + 1, 4}, {33, 1}, {1, 33}} {
		if _, err := NewGadget(lb[0], lb[1]); err == nil {
			t.Errorf("NewGadget(%d, %d) accepted", lb[0], lb[1])
		}
	}
}

func TestEncryptDecrypt(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			sk := testKeys(p).sk
			enc := newEncryptor(t, sk, 1)
			r := mrand.New(mrand.NewPCG(1, 2))
			for i := range 200 {
				b := i%3 == 0
				ct := enc.EncryptBool(b)
				if sk.DecryptBool(ct) != b {
					t.Fatalf("TLWE bool round trip failed")
				}
				mu := torus.Torus32(r.Uint32())
				e := int64((sk.PhaseTLWE(enc.EncryptTLWE(mu)) - mu).Signed())
				if math.Abs(float64(e)) > 7*p.LWEStdDev()*(1<<32) {
					t.Fatalf("TLWE noise %d too large", e)
				}
			}
			// Extracted-key TLWE.
			ext := NewTLWE(p.ExtractedLWEDimension())
			enc.EncryptExtractedTLWETo(ext, 12345<<10, 1e-6)
			if e := (sk.PhaseTLWE(ext) - 12345<<10).Signed(); math.Abs(float64(e)) > 7e-6*(1<<32) {
				t.Fatalf("extracted TLWE noise %d", e)
			}
			// TRLWE.
			mu := torus.NewPoly(p.PolyDegree())
			for i := range mu {
				mu[i] = torus.Torus32(r.Uint32())
			}
			ph := sk.PhaseTRLWE(enc.EncryptTRLWE(mu))
			for i := range mu {
				if e := (ph[i] - mu[i]).Signed(); math.Abs(float64(e)) > 7*p.BKStdDev()*(1<<32)+1 {
					t.Fatalf("TRLWE noise %d at %d", e, i)
				}
			}
		})
	}
}

func randTRLWE(r *mrand.Rand, k, n int) *TRLWE {
	c := NewTRLWE(k, n)
	for _, p := range c.Value {
		for i := range p {
			p[i] = torus.Torus32(r.Uint32())
		}
	}
	return c
}

// TestExternalProductExact checks the NTT external product against the
// naive polynomial one bit for bit, on uniformly random TRGSW rows (the
// worst case for the exactness bound, not just encryptions) and on
// extreme-valued rows and inputs.
func TestExternalProductExact(t *testing.T) {
	r := mrand.New(mrand.NewPCG(13, 14))
	for _, p := range allSets() {
		t.Run(p.Name(), func(t *testing.T) {
			k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
			e := newEvaluator(t, p, false)
			for trial := range 3 {
				c := NewTRGSW(k, l, n)
				for ri := range c.Rows {
					for _, poly := range c.Rows[ri].Value {
						for i := range poly {
							switch trial {
							case 2: // extremes: −2^31 everywhere maximises |Σ digit·row|
								poly[i] = 1 << 31
							default:
								poly[i] = torus.Torus32(r.Uint32())
							}
						}
					}
				}
				src := randTRLWE(r, k, n)
				if trial == 2 {
					// Every digit −Bg/2: a + offset ≡ 0 in the digit bits.
					for _, poly := range src.Value {
						for i := range poly {
							poly[i] = torus.Torus32(-p.bkOffset)
						}
					}
				}
				cn, err := NewNTTTRGSW(e.Plan(), c)
				require.NoError(t, err)
				got, want := NewTRLWE(k, n), NewTRLWE(k, n)
				e.ExternalProductTo(got, cn, src)
				ExternalProductNaiveTo(p, want, c, src)
				if !equalTRLWE(got, want) {
					t.Fatalf("trial %d: NTT external product differs from the naive one", trial)
				}
				// In place (dst = src).
				e.ExternalProductTo(src, cn, src)
				if !equalTRLWE(src, want) {
					t.Fatalf("trial %d: in-place external product differs", trial)
				}
				// The fused rotation step equals X^a·acc − acc followed by the product.
				acc := randTRLWE(r, k, n)
				a := 1 + r.IntN(2*n-1)
				diff := NewTRLWE(k, n)
				MulXaTRLWETo(diff, acc, a)
				SubTRLWETo(diff, diff, acc)
				ExternalProductNaiveTo(p, want, c, diff)
				AddTRLWETo(want, want, acc)
				e.cmuxRotate(acc, cn, a, nil)
				if !equalTRLWE(acc, want) {
					t.Fatalf("trial %d: fused rotation step (a=%d) differs from the naive one", trial, a)
				}
			}
		})
	}
}

func equalTRLWE(a, b *TRLWE) bool {
	for j := range a.Value {
		for i := range a.Value[j] {
			if a.Value[j][i] != b.Value[j][i] {
				return false
			}
		}
	}
	return true
}

func TestCMux(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			kp := testKeys(p)
			enc := newEncryptor(t, kp.sk, 2)
			e := newEvaluator(t, p, false)
			n := p.PolyDegree()
			m0, m1 := torus.NewPoly(n), torus.NewPoly(n)
			for i := range m0 {
				m0[i] = torus.Encode(int64(i%8), 8)
				m1[i] = torus.Encode(int64((i*3+1)%8), 8)
			}
			d0, d1 := enc.EncryptTRLWE(m0), enc.EncryptTRLWE(m1)
			for _, bit := range []int32{0, 1} {
				c, err := NewNTTTRGSW(e.Plan(), enc.EncryptTRGSW(bit))
				require.NoError(t, err)
				dst := NewTRLWE(p.GLWEDimension(), n)
				e.CMuxTo(dst, c, d0, d1)
				want := m0
				if bit == 1 {
					want = m1
				}
				ph := kp.sk.PhaseTRLWE(dst)
				for i := range ph {
					if torus.Decode(ph[i], 8) != torus.Decode(want[i], 8) {
						t.Fatalf("CMux(%d): coefficient %d decodes wrong", bit, i)
					}
				}
			}
		})
	}
}

func TestSampleExtract(t *testing.T) {
	p := toyParams
	kp := testKeys(p)
	enc := newEncryptor(t, kp.sk, 3)
	n := p.PolyDegree()
	mu := torus.NewPoly(n)
	for i := range mu {
		mu[i] = torus.Encode(int64(i), 16)
	}
	ct := enc.EncryptTRLWE(mu)
	ext := NewTLWE(p.ExtractedLWEDimension())
	for _, idx := range []int{0, 1, 7, n - 1} {
		SampleExtractTo(ext, ct, idx)
		if torus.Decode(kp.sk.PhaseTLWE(ext), 16) != int64(idx%16) {
			t.Fatalf("SampleExtract(%d) decodes wrong", idx)
		}
	}
}

func TestKeySwitch(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			kp := testKeys(p)
			enc := newEncryptor(t, kp.sk, 4)
			e := newEvaluator(t, p, true)
			in, out := NewTLWE(p.ExtractedLWEDimension()), NewTLWE(p.LWEDimension())
			var worst float64
			for i := range 40 {
				mu := torus.Encode(int64(i), 8)
				enc.EncryptExtractedTLWETo(in, mu, p.BKStdDev())
				e.KeySwitchTo(out, in)
				err := math.Abs((kp.sk.PhaseTLWE(out) - mu).Float64())
				worst = max(worst, err)
			}
			// Key switching adds variance ≈ kN·t·σ² + kN/2·(2^{−t·basebit})²/12.
			kn := float64(p.ExtractedLWEDimension())
			sd := math.Sqrt(kn*float64(p.KSLevels())*p.LWEStdDev()*p.LWEStdDev() +
				kn/2*math.Ldexp(1, -2*p.KSLevels()*p.KSBaseLog())/12)
			if worst > 6*sd {
				t.Fatalf("key-switching error %g > 6·%g", worst, sd)
			}
		})
	}
}

// TestBootstrap checks gate bootstrapping of a NAND-style combination for
// every set, with several fresh keys.
func TestBootstrap(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			keys, gates := 3, 8
			if testing.Short() && p.Name() != toyParams.Name() {
				keys, gates = 1, 2 // package bootstrap covers more gates
			}
			for ki := range keys {
				var sk *SecretKey
				var ck *CloudKey
				if ki == 0 {
					kp := testKeys(p)
					sk, ck = kp.sk, kp.ck
				} else {
					var err error
					sk, err = GenerateSecretKeyFromSeed(p, seedOf(fmt.Sprint("bs-sk", p.Name()), ki))
					require.NoError(t, err)
					if ck, err = GenerateCloudKeyFromSeed(sk, seedOf("bs-ck", ki)); err != nil {
						t.Fatal(err)
					}
				}
				e, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), ck)
				require.NoError(t, err)
				enc := newEncryptor(t, sk, 10+ki)
				mu := torus.Encode(1, 8)
				for g := range gates {
					x, y := g&1 == 1, g&2 == 2
					// NAND: (0, 1/8) − c1 − c2.
					c := NewTrivialTLWE(p.LWEDimension(), torus.Encode(1, 8))
					SubTLWETo(c, c, enc.EncryptBool(x))
					SubTLWETo(c, c, enc.EncryptBool(y))
					out := NewTLWE(p.LWEDimension())
					e.BootstrapTo(out, c, mu)
					if got := sk.DecryptBool(out); got != !(x && y) {
						t.Fatalf("key %d: NAND(%v, %v) = %v", ki, x, y, got)
					}
					// No key switching: under the extracted key, dimension kN.
					ext := NewTLWE(p.ExtractedLWEDimension())
					e.BootstrapNoKeySwitchTo(ext, c, mu)
					if got := sk.DecryptBool(ext); got != !(x && y) {
						t.Fatalf("key %d: NAND(%v, %v) without key switching = %v", ki, x, y, got)
					}
					// In place.
					e.BootstrapTo(c, c, mu)
					if got := sk.DecryptBool(c); got != !(x && y) {
						t.Fatalf("key %d: in-place NAND wrong", ki)
					}
				}
			}
		})
	}
}

func TestBlindRotateTestVector(t *testing.T) {
	p := toyParams
	kp := testKeys(p)
	enc := newEncryptor(t, kp.sk, 5)
	e := newEvaluator(t, p, true)
	n := p.PolyDegree()
	tv := torus.NewPoly(n)
	for i := range tv {
		tv[i] = torus.Encode(int64(i), int64(2*n))
	}
	acc := NewTRLWE(p.GLWEDimension(), n)
	for _, m := range []int64{0, 3, 100, int64(n) - 5, int64(n) + 7} {
		ct := enc.EncryptTLWE(torus.Encode(m, int64(2*n)))
		// The exact rotation: φ̄ = b̄ − Σ ā_i·s_i mod 2N, then coefficient 0
		// of X^{−φ̄}·tv is tv[φ̄] (or −tv[φ̄−N]).
		phi := int(torus.ModSwitch(ct.B(), uint64(2*n)))
		for i, s := range kp.sk.LWEKey() {
			phi -= int(s) * int(torus.ModSwitch(ct.Value[i], uint64(2*n)))
		}
		phi = ((phi % (2 * n)) + 2*n) % (2 * n)
		want := tv[phi%n]
		if phi >= n {
			want = -want
		}
		e.BlindRotateTo(acc, ct, tv)
		ph := kp.sk.PhaseTRLWE(acc)
		if torus.Decode(ph[0], int64(2*n)) != torus.Decode(want, int64(2*n)) {
			t.Fatalf("blind rotation of %d/(2N): coefficient 0 decodes to %d, want %d (φ̄ = %d)",
				m, torus.Decode(ph[0], int64(2*n)), torus.Decode(want, int64(2*n)), phi)
		}
		// The test vector in one of acc's own polynomials, body or mask:
		// the same bits.
		for j := range acc.Value {
			own := NewTRLWE(p.GLWEDimension(), n)
			copy(own.Value[j], tv)
			e.BlindRotateTo(own, ct, own.Value[j])
			if !slices.EqualFunc(own.Value, acc.Value, slices.Equal) {
				t.Fatalf("blind rotation of %d/(2N) with the test vector in acc's polynomial %d differs", m, j)
			}
		}
	}
}

func TestKeyGenDeterministic(t *testing.T) {
	p := toyParams
	digest := func(procs int) [32]byte {
		defer setProcs(procs)()
		sk, err := GenerateSecretKeyFromSeed(p, seedOf("det", 0))
		require.NoError(t, err)
		ck, err := GenerateCloudKeyFromSeed(sk, seedOf("det", 1))
		require.NoError(t, err)
		return digestCloudKey(ck)
	}
	if a, b := digest(1), digest(3); a != b {
		t.Fatalf("key generation depends on GOMAXPROCS: %x vs %x", a, b)
	}
	sk1, _ := GenerateSecretKeyFromSeed(p, seedOf("det", 0))
	sk2, _ := GenerateSecretKey(p)
	same := true
	for i := range sk1.lwe {
		same = same && sk1.lwe[i] == sk2.lwe[i]
	}
	if same {
		t.Fatal("GenerateSecretKey gave the seeded key")
	}
}

func TestZeroAndNilInputs(t *testing.T) {
	if _, err := GenerateSecretKey(Params{}); err == nil {
		t.Error("GenerateSecretKey(Params{}) succeeded")
	}
	if _, err := GenerateCloudKey(nil); err == nil {
		t.Error("GenerateCloudKey(nil) succeeded")
	}
	if _, err := GenerateCloudKey(&SecretKey{}); err == nil {
		t.Error("GenerateCloudKey(&SecretKey{}) succeeded")
	}
	if err := (&CloudKey{}).Validate(); err == nil {
		t.Error("empty CloudKey validated")
	}
	if err := (*CloudKey)(nil).Validate(); err == nil {
		t.Error("nil CloudKey validated")
	}
	if _, err := NewEvaluator(TFHELib128, nil, nil); err == nil {
		t.Error("NewEvaluator with a nil plan succeeded")
	}
	if _, err := NewEvaluator(TFHELib128, butterfly(t, 512), nil); err == nil {
		t.Error("NewEvaluator with a plan of the wrong size succeeded")
	}
	kp := testKeys(toyParams)
	if _, err := NewEvaluator(TFHELib128, butterfly(t, 1024), kp.ck); err == nil {
		t.Error("NewEvaluator with another set's key succeeded")
	}
	if _, err := kp.ck.BootstrappingKey().NTT(butterfly(t, 512)); err == nil {
		t.Error("BootstrappingKey.NTT with a plan of the wrong size succeeded")
	}
}

func TestNTTKeyCache(t *testing.T) {
	kp := testKeys(toyParams)
	bk := kp.ck.BootstrappingKey()
	a, err := bk.NTT(butterfly(t, 256))
	require.NoError(t, err)
	b, err := bk.NTT(butterfly(t, 256)) // another plan, same order
	require.NoError(t, err)
	if &a.Data()[0] != &b.Data()[0] {
		t.Error("plans of equal order do not share the NTT key")
	}
	if b.Plan() == a.Plan() {
		t.Error("the NTT key must carry the plan it was asked for")
	}
}

func TestEvaluatorAllocs(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	p := toyParams
	kp := testKeys(p)
	e := newEvaluator(t, p, true)
	enc := newEncryptor(t, kp.sk, 6)
	in, out := enc.EncryptBool(true), NewTLWE(p.LWEDimension())
	if n := testing.AllocsPerRun(5, func() { e.BootstrapTo(out, in, 1<<29) }); n != 0 {
		t.Errorf("BootstrapTo allocates %v times", n)
	}
	ext := NewTLWE(p.ExtractedLWEDimension())
	if n := testing.AllocsPerRun(5, func() { e.KeySwitchTo(out, ext) }); n != 0 {
		t.Errorf("KeySwitchTo allocates %v times", n)
	}
}

// TestTRLWESetTrivialShape checks that SetTrivial sets every coefficient
// for a message of N coefficients and panics on any other length or a
// malformed sample, as the TRLWE functions do on shape mismatches: a short
// message left the rest of the body as it was, silently.
func TestTRLWESetTrivialShape(t *testing.T) {
	c := NewTRLWE(2, 8)
	for j := range c.Value {
		for i := range c.Value[j] {
			c.Value[j][i] = 7
		}
	}
	mu := torus.Poly{1, 2, 3, 4, 5, 6, 7, 8}
	c.SetTrivial(mu)
	if !slices.Equal(c.B(), mu) || slices.ContainsFunc(append(c.Value[0], c.Value[1]...), func(x torus.Torus32) bool { return x != 0 }) {
		t.Fatalf("SetTrivial gave %v", c.Value)
	}
	ragged := NewTRLWE(1, 8)
	ragged.Value[0] = ragged.Value[0][:4]
	for name, f := range map[string]func(){
		"short message": func() { NewTRLWE(2, 8).SetTrivial(mu[:3]) },
		"long message":  func() { NewTRLWE(2, 4).SetTrivial(mu) },
		"nil message":   func() { NewTRLWE(2, 8).SetTrivial(nil) },
		"ragged TRLWE":  func() { ragged.SetTrivial(mu) },
		"zero TRLWE":    func() { (&TRLWE{}).SetTrivial(nil) },
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.Contains(s, "SetTrivial") {
					t.Errorf("%s: recovered %v, want SetTrivial's panic", name, r)
				}
			}()
			f()
		}()
	}
}

// TestMulXaTRLWEToAliasing checks that MulXaTRLWETo panics when dst is src
// (or shares its polynomials), which its doc forbids, rather than rotate
// each polynomial over itself into a wrong sample.
func TestMulXaTRLWEToAliasing(t *testing.T) {
	c := NewTRLWE(1, 8)
	c.Value[1][0] = 5
	view := &TRLWE{Value: []torus.Poly{c.Value[0], c.Value[1]}}
	for name, dst := range map[string]*TRLWE{"dst is src": c, "dst shares src's polynomials": view} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.Contains(s, "MulXaTo") && !strings.Contains(s, "MulXaTRLWETo") {
					t.Errorf("%s: recovered %v, want the aliasing panic", name, r)
				}
			}()
			MulXaTRLWETo(dst, c, 3)
		}()
	}
	d := NewTRLWE(1, 8)
	MulXaTRLWETo(d, c, 3)
	if d.Value[1][3] != 5 {
		t.Errorf("MulXaTRLWETo(d, c, 3) = %v", d.Value)
	}
}
