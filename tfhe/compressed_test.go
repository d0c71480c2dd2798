package tfhe

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// near reports whether got is within tol of want on the torus.
func nearTorus(got, want torus.Torus32, tol uint32) bool {
	return uint32(got-want)+tol <= 2*tol
}

// TestCompressedCloudKeyPhases decrypts every sample of an expanded
// compressed key, each grouping: every TRGSW row has the phase its message
// gives (m·g_i at coefficient 0 of the body rows, −m·g_i·s_c for the rows
// of mask column c), every key-switching sample m·s'_i/base^j, all within
// a few standard deviations of the key's noise; and CheckCloudKey accepts
// the key for its secret key and refuses it for another.
func TestCompressedCloudKeyPhases(t *testing.T) {
	p := toyParams
	sk := testKeys(p).sk
	other, err := GenerateSecretKeyFromSeed(p, seedOf("compressed-other", 0))
	require.NoError(t, err)
	k, l, N := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	gad := p.BKGadget()
	// 64σ of each key's noise for the toy set (σ_bk 2^-28, σ_lwe 2^-20):
	// 2^-22 and 2^-14 of the torus. Each is below half the smallest message
	// it must tell apart: g_l = 2^-18 (Bg = 2^6, l = 3) for the
	// bootstrapping key, whose last level a tolerance of 2^-14 could not
	// see; 2^-12 (basebit 2, t = 6) for the key-switching key.
	const bkTol, ksTol = 1 << 10, 1 << 18
	for _, g := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("g%d", g), func(t *testing.T) {
			c, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-phases", g), WithGrouping(g))
			require.NoError(t, err)
			assert.Equal(t, g, c.Grouping())
			assert.True(t, c.Params().Equal(p))
			ck, err := c.Expand()
			require.NoError(t, err)
			assert.Equal(t, g, ck.Grouping())
			terms := groupTerms(p.LWEDimension(), g)
			require.Len(t, terms, ck.bk.Len())
			for idx, tm := range terms {
				m := groupMessage(sk.lwe[tm.first:tm.first+tm.r], tm.u)
				for col := 0; col <= k; col++ {
					for i := 0; i < l; i++ {
						mg := torus.Torus32(m) * gad.Factor(i+1)
						phase := sk.PhaseTRLWE(&ck.bk.rows[idx].Rows[col*l+i])
						for tt := range N {
							var want torus.Torus32
							switch {
							case col == k && tt == 0:
								want = mg
							case col < k:
								want = -mg * torus.Torus32(sk.trlwe[col][tt])
							}
							if !nearTorus(phase[tt], want, bkTol) {
								t.Fatalf("sample %d, row %d, coefficient %d: phase %#x, want %#x", idx, col*l+i, tt, uint32(phase[tt]), uint32(want))
							}
						}
					}
				}
			}
			basebit, half := p.KSBaseLog(), 1<<p.KSBaseLog()/2
			for i := range p.ExtractedLWEDimension() {
				for j := 1; j <= p.KSLevels(); j++ {
					for m := 1; m <= half; m++ {
						want := torus.Torus32(m) * torus.Torus32(sk.ext[i]) << (32 - j*basebit)
						if got := sk.PhaseTLWE(ck.ksk.Sample(i, j, m)); !nearTorus(got, want, ksTol) {
							t.Fatalf("key-switching sample (%d, %d, %d): phase %#x, want %#x", i, j, m, uint32(got), uint32(want))
						}
					}
				}
			}
			require.NoError(t, sk.CheckCloudKey(ck))
			require.ErrorIs(t, other.CheckCloudKey(ck), ErrKeyMismatch)
		})
	}
}

// TestCompressedCloudKeyBootstraps evaluates NAND through a bootstrap with
// the expanded key of every set (TFHELib128 grouped by 3 included, the
// GPU's key: its own engines' tests take any CloudKey), on every input.
func TestCompressedCloudKeyBootstraps(t *testing.T) {
	for _, p := range heavySets(t) {
		for _, g := range []int{1, 3} {
			if testing.Short() && g == 1 && p.Name() != toyParams.Name() {
				continue // the grouped key covers both row layouts
			}
			t.Run(fmt.Sprintf("%s/g%d", p.Name(), g), func(t *testing.T) {
				sk := testKeys(p).sk
				c, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-bs/"+p.Name(), g), WithGrouping(g))
				require.NoError(t, err)
				ck, err := c.Expand()
				require.NoError(t, err)
				e, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), ck)
				require.NoError(t, err)
				enc := newEncryptor(t, sk, 40+g)
				mu := torus.Encode(1, 8)
				for in := range 4 {
					x, y := in&1 == 1, in&2 == 2
					ct := NewTrivialTLWE(p.LWEDimension(), torus.Encode(1, 8))
					SubTLWETo(ct, ct, enc.EncryptBool(x))
					SubTLWETo(ct, ct, enc.EncryptBool(y))
					out := NewTLWE(p.LWEDimension())
					e.BootstrapTo(out, ct, mu)
					require.Equal(t, !(x && y), sk.DecryptBool(out), "NAND(%v, %v)", x, y)
				}
			})
		}
	}
}

// TestCompressedCloudKeyMarshal: the encoding round-trips byte for byte,
// is the size documented (bodies and seed only), CloudKey.UnmarshalBinary
// refuses it, generation from one seed is reproducible, and two seeds give
// two mask seeds.
func TestCompressedCloudKeyMarshal(t *testing.T) {
	p := toyParams
	sk := testKeys(p).sk
	for _, g := range []int{1, 2} {
		c, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-marshal", g), WithGrouping(g))
		require.NoError(t, err)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		bkLen, ksLen := compressedLens(p, g)
		header := len(appendParams(appendHeader(nil, kindCompressedCloudKey), p)) + 2 + torus.SeedSize
		assert.Equal(t, header+4*(bkLen+ksLen), len(b), "encoded size")

		var d CompressedCloudKey
		require.NoError(t, d.UnmarshalBinary(b))
		b2, err := d.MarshalBinary()
		require.NoError(t, err)
		assert.True(t, bytes.Equal(b, b2), "re-encoding differs")

		again, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-marshal", g), WithGrouping(g))
		require.NoError(t, err)
		b3, err := again.MarshalBinary()
		require.NoError(t, err)
		assert.True(t, bytes.Equal(b, b3), "one seed, two keys")

		ck, err := c.Expand()
		require.NoError(t, err)
		full, err := ck.MarshalBinary()
		require.NoError(t, err)
		// A CloudKey refuses it, naming the way (Expand allocates what the
		// sender's parameters say: the caller checks them first).
		err = new(CloudKey).UnmarshalBinary(b)
		require.ErrorIs(t, err, ErrFormat)
		assert.Contains(t, err.Error(), "CompressedCloudKey.UnmarshalBinary")
		t.Logf("g=%d: compressed %d bytes, expanded %d (%.1fx)", g, len(b), len(full), float64(len(full))/float64(len(b)))
	}
	a, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-seed", 0))
	require.NoError(t, err)
	b, err := GenerateCompressedCloudKeyFromSeed(sk, seedOf("compressed-seed", 1))
	require.NoError(t, err)
	assert.NotEqual(t, a.maskSeed, b.maskSeed)
	// The plain and the compressed key of one seed share no mask stream:
	// the first key-switching sample's mask differs.
	plain, err := GenerateCloudKeyFromSeed(sk, seedOf("compressed-seed", 0))
	require.NoError(t, err)
	ea, err := a.Expand()
	require.NoError(t, err)
	assert.NotEqual(t, plain.ksk.Sample(0, 1, 1).Value, ea.ksk.Sample(0, 1, 1).Value)
}

// TestCompressedCloudKeyTFHELib128Size pins the size the docs give for
// TFHELib128 (computed, no key made): about 15.5 MB, 36 MB grouped by 3.
func TestCompressedCloudKeyTFHELib128Size(t *testing.T) {
	for _, c := range []struct {
		g    int
		want int
	}{{1, 15_548_416}, {3, 36_192_256}} {
		bk, ks := compressedLens(TFHELib128, c.g)
		assert.Equal(t, c.want, 4*(bk+ks), "g=%d", c.g)
	}
}

func TestCompressedCloudKeyErrors(t *testing.T) {
	p := toyParams
	kp := testKeys(p)
	c, err := GenerateCompressedCloudKeyFromSeed(kp.sk, seedOf("compressed-errors", 0))
	require.NoError(t, err)
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	ckb, err := kp.ck.MarshalBinary()
	require.NoError(t, err)
	corrupt := func(i int, v byte) []byte {
		d := bytes.Clone(b)
		d[i] = v
		return d
	}
	groupingAt := len(appendParams(appendHeader(nil, kindCompressedCloudKey), p))
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", b[:len(b)-1]},
		{"trailing", append(bytes.Clone(b), 0)},
		{"header only", b[:headerSize]},
		{"no seed", b[:groupingAt+2+5]},
		{"grouping 0", corrupt(groupingAt, 0)},
		{"grouping 9", corrupt(groupingAt, 9)},
		{"bad version", corrupt(4, 7)},
		{"a cloud key", ckb},
	}
	for _, tc := range cases {
		var d CompressedCloudKey
		err := d.UnmarshalBinary(tc.data)
		require.Error(t, err, tc.name)
		assert.ErrorIs(t, err, ErrFormat, tc.name)
		if tc.name != "a cloud key" {
			assert.ErrorIs(t, new(CloudKey).UnmarshalBinary(tc.data), ErrFormat, "as a CloudKey: %s", tc.name)
		}
	}
	// A compressed key is not a secret key.
	assert.ErrorIs(t, new(SecretKey).UnmarshalBinary(b), ErrFormat)

	var nilKey *CompressedCloudKey
	assert.Error(t, nilKey.UnmarshalBinary(b))
	assert.Error(t, nilKey.Validate())
	_, err = nilKey.Expand()
	assert.Error(t, err)
	_, err = nilKey.MarshalBinary()
	assert.Error(t, err)
	assert.Equal(t, 0, nilKey.Grouping())
	assert.True(t, nilKey.Params().Equal(Params{}))
	_, err = (&CompressedCloudKey{}).Expand()
	assert.Error(t, err)
	short := *c
	short.ksk = short.ksk[:len(short.ksk)-1]
	assert.Error(t, short.Validate())
	_, err = short.MarshalBinary()
	assert.Error(t, err)

	_, err = GenerateCompressedCloudKeyFromSeed(kp.sk, [torus.SeedSize]byte{})
	assert.ErrorIs(t, err, errZeroSeed)
	_, err = GenerateCompressedCloudKey(nil)
	assert.Error(t, err)
	_, err = GenerateCompressedCloudKey(kp.sk, WithGrouping(9))
	assert.Error(t, err)

	// A failed decode leaves the key as it was. The bytes are another
	// key's (another seed and grouping), one byte short, so that what a
	// decoder might write into the key before it fails (parameters,
	// grouping, seed, bodies) differs from what the key held; d's bodies
	// are its own, so that a write into them is not also one into c's.
	other, err := GenerateCompressedCloudKeyFromSeed(kp.sk, seedOf("compressed-errors", 1), WithGrouping(2))
	require.NoError(t, err)
	ob, err := other.MarshalBinary()
	require.NoError(t, err)
	d := *c
	d.bk, d.ksk = slices.Clone(c.bk), slices.Clone(c.ksk)
	require.Error(t, d.UnmarshalBinary(ob[:len(ob)-1]))
	assert.Equal(t, *c, d)
	assert.True(t, errors.Is(new(CompressedCloudKey).UnmarshalBinary(corrupt(0, 'X')), ErrFormat))
}

// TestCompressedCloudKeyNoiseNotPlainMasks: the plain and the compressed
// cloud key of one secret key and one seed are both public, so the
// compressed key's noise must not follow from the plain key. It did when
// both drew their noise from the same streams (one root): the plain key
// draws each sample's mask and then its noise from the stream that the
// compressed key drew only its noise from, so the compressed key's noise
// was a function of the plain key's published masks, and its samples
// noiseless equations in sk.
func TestCompressedCloudKeyNoiseNotPlainMasks(t *testing.T) {
	p := toyParams
	sk := testKeys(p).sk
	seed := seedOf("compressed-plain-noise", 0)
	plain, err := GenerateCloudKeyFromSeed(sk, seed)
	require.NoError(t, err)
	c, err := GenerateCompressedCloudKeyFromSeed(sk, seed)
	require.NoError(t, err)
	ck, err := c.Expand()
	require.NoError(t, err)
	n, basebit, half := p.LWEDimension(), p.KSBaseLog(), 1<<p.KSBaseLog()/2
	root := torus.NewSamplerFromSeed(boundSeed(seed, labelCloudKeyRoot, p, sk, 1))
	for i := range 4 {
		// The plain key's stream of coordinate i: its first words are the
		// mask of sample (i, 1, 1), which the plain key publishes.
		mask := make([]torus.Torus32, n)
		root.Derive(labelKSK, uint64(i)).UniformSlice(mask)
		require.Equal(t, plain.ksk.Sample(i, 1, 1).Value[:n], mask, "not the plain key's stream")
		// Those words read as Gaussians, against the compressed key's
		// noise of coordinate i, in its order of generation.
		fromMask := root.Derive(labelKSK, uint64(i))
		var want, got []torus.Torus32
		for j := 1; j <= p.KSLevels(); j++ {
			for m := 1; m <= half; m++ {
				mu := torus.Torus32(m) * torus.Torus32(sk.ext[i]) << (32 - j*basebit)
				got = append(got, sk.PhaseTLWE(ck.ksk.Sample(i, j, m))-mu)
				want = append(want, fromMask.Gaussian(p.LWEStdDev()))
			}
		}
		assert.NotEqual(t, want, got, "coordinate %d: the compressed key's noise is the plain key's mask words", i)
	}
}
