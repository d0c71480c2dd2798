package tfhe

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/goldfhe/goldfhe/torus"
)

// Domain-separation labels of the samplers derived from a key-generation
// seed (torus.Sampler.Derive): each independent piece of a key has its own
// stream, so generation is deterministic given the seed whatever the number
// of cores that share the work.
const (
	labelLWEKey   = "goldfhe/tfhe/lwe-key"
	labelTRLWEKey = "goldfhe/tfhe/trlwe-key"
	labelBK       = "goldfhe/tfhe/bootstrapping-key"
	labelBKGroup  = "goldfhe/tfhe/bootstrapping-key/grouped"
	labelKSK      = "goldfhe/tfhe/key-switching-key"
	// labelMaskSeed derives a compressed cloud key's public mask seed from
	// its secret root.
	labelMaskSeed = "goldfhe/tfhe/cloud-key/mask-seed"

	// The roots of those samplers: the caller's seed bound to what it
	// makes (boundSeed).
	labelSecretKeyRoot = "goldfhe/tfhe/secret-key/"
	labelCloudKeyRoot  = "goldfhe/tfhe/cloud-key/"
	// A compressed cloud key's root: not the plain key's, whose streams
	// begin with the masks the plain key publishes, and from which the
	// compressed key would draw only noise.
	labelCompressedCloudKeyRoot = "goldfhe/tfhe/compressed-cloud-key/"
	labelEncryptorRoot          = "goldfhe/tfhe/encryptor/"
)

// boundSeed returns the seed of the sampler a FromSeed function draws from:
// seed bound to the parameter set (its whole encoding, name included), to
// sk's bits when sk is not nil, and to extra. A seed given twice by mistake
// then gives unrelated values: without it, one seed gave two sets the same
// TRLWE key (a key of the weak CuFHE80 was one of TFHELib128), and cloud
// keys or encryptors of two secret keys the same masks and noise, whose
// differences are noiseless equations in the keys. Hashing sk reads every
// bit the same way whatever its value.
func boundSeed(seed [torus.SeedSize]byte, label string, p Params, sk *SecretKey, extra uint64) [torus.SeedSize]byte {
	h := sha256.New()
	h.Write(appendParams(nil, p))
	if sk != nil {
		bits := make([]byte, len(sk.lwe)+len(sk.ext))
		for i, b := range sk.lwe {
			bits[i] = byte(b)
		}
		for i, b := range sk.ext {
			bits[len(sk.lwe)+i] = byte(b)
		}
		h.Write(bits)
		clear(bits)
	}
	return torus.DeriveSeed(seed, label+hex.EncodeToString(h.Sum(nil)), extra)
}

func cryptoSeed() [torus.SeedSize]byte {
	var s [torus.SeedSize]byte
	rand.Read(s[:]) // never fails (Go ≥ 1.24)
	return s
}

// errZeroSeed is the error of the FromSeed functions for an all-zero seed,
// almost surely an array never filled: its key or stream is one anybody can
// reproduce.
var errZeroSeed = errors.New("tfhe: an all-zero seed (never filled?): use the crypto/rand constructors, or a secret random seed")

func checkSeed(seed [torus.SeedSize]byte) error {
	if seed == ([torus.SeedSize]byte{}) {
		return errZeroSeed
	}
	return nil
}

// GenerateSecretKey returns a fresh secret key for p from crypto/rand.
func GenerateSecretKey(p Params) (*SecretKey, error) {
	return GenerateSecretKeyFromSeed(p, cryptoSeed())
}

// GenerateSecretKeyFromSeed returns the secret key determined by seed and
// p: one seed gives unrelated keys for two parameter sets (even sets that
// differ only in name). Use it for tests and reproducible experiments; a
// seed must be secret and random to protect data. An all-zero seed is an
// error.
func GenerateSecretKeyFromSeed(p Params, seed [torus.SeedSize]byte) (*SecretKey, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := checkSeed(seed); err != nil {
		return nil, err
	}
	root := torus.NewSamplerFromSeed(boundSeed(seed, labelSecretKeyRoot, p, nil, 0))
	sk := newSecretKey(p)
	root.Derive(labelLWEKey, 0).BinarySlice(sk.lwe)
	root.Derive(labelTRLWEKey, 0).BinarySlice(sk.ext) // the k TRLWE key polynomials
	return sk, nil
}

// GenerateCloudKey returns a fresh cloud key for sk from crypto/rand.
func GenerateCloudKey(sk *SecretKey, opts ...CloudKeyOption) (*CloudKey, error) {
	return GenerateCloudKeyFromSeed(sk, cryptoSeed(), opts...)
}

// GenerateCloudKeyFromSeed returns the cloud key of sk determined by seed:
// BK_i = TRGSW(s_i) with noise σ_bk (or the grouped samples of
// WithGrouping) and the key-switching table with noise σ_lwe. The work is
// spread over all cores (GOMAXPROCS); the result depends only on sk, seed
// and the options, and the cloud keys of two secret keys from one seed are
// unrelated. Use it for tests and reproducible experiments.
//
// The seed is as secret as sk, though the cloud key is public: it
// determines every mask and noise of the key, so anyone holding the seed
// and the cloud key recovers sk (the key-switching table's noise removed,
// its samples are noiseless equations in sk). Never publish or ship the
// seed in place of the key. An all-zero seed is an error.
func GenerateCloudKeyFromSeed(sk *SecretKey, seed [torus.SeedSize]byte, opts ...CloudKeyOption) (*CloudKey, error) {
	ck, _, err := generateCloudKey(sk, seed, false, opts)
	return ck, err
}

// generateCloudKey makes the cloud key of GenerateCloudKeyFromSeed, or with
// compressed that of GenerateCompressedCloudKeyFromSeed: every mask from a
// stream of maskSeed, which it returns, and the bootstrapping key's
// messages in its rows' bodies (encryptTRGSW's bodyOnly). maskSeed is one
// more value derived from the secret root seed (torus.DeriveSeed, a
// SHA-256), so publishing it tells nothing of the root, the key's noise
// or sk. A compressed key's root has its own label: with the plain key's,
// its noise streams were the plain key's streams of one seed, whose first
// words are the plain key's (public) masks, so publishing both keys of one
// seed gave away the compressed key's noise, and sk with it.
func generateCloudKey(sk *SecretKey, seed [torus.SeedSize]byte, compressed bool, opts []CloudKeyOption) (ck *CloudKey, maskSeed [torus.SeedSize]byte, err error) {
	if err := sk.check(); err != nil {
		return nil, maskSeed, err
	}
	if err := checkSeed(seed); err != nil {
		return nil, maskSeed, err
	}
	p := sk.params
	cfg := cloudKeyConfig{grouping: 1}
	for _, o := range opts {
		if o != nil { // a nil option, e.g. from a conditional, sets nothing
			o(&cfg)
		}
	}
	g := cfg.grouping
	if err := checkGrouping(p, g); err != nil {
		return nil, maskSeed, err
	}
	rootLabel := labelCloudKeyRoot
	if compressed {
		rootLabel = labelCompressedCloudKeyRoot
	}
	rootSeed := boundSeed(seed, rootLabel, p, sk, uint64(g))
	root := torus.NewSamplerFromSeed(rootSeed)
	// The masks of piece i: maskRoot.Derive(label, i) for a compressed
	// key, the piece's own noise stream for a plain one (as before
	// compressed keys).
	var maskRoot *torus.Sampler
	if compressed {
		maskSeed = torus.DeriveSeed(rootSeed, labelMaskSeed, 0)
		maskRoot = torus.NewSamplerFromSeed(maskSeed)
	}
	sk.trlweNTT() // once, before the workers share it

	bk := newBootstrappingKey(p, g)
	newScratch := func() *nttScratch { return newNTTScratch(p.PolyDegree()) }
	if g == 1 {
		parallelFor(p.LWEDimension(), newScratch, func(sc *nttScratch, i int) {
			noise := root.Derive(labelBK, uint64(i))
			mask := noise
			if maskRoot != nil {
				mask = maskRoot.Derive(labelBK, uint64(i))
			}
			encryptTRGSW(&bk.rows[i], sk.lwe[i], sk, p.BKStdDev(), mask, noise, sc, compressed)
		})
	} else {
		// Sample i is term u of the group holding it (bkSamples order).
		terms := groupTerms(p.LWEDimension(), g)
		parallelFor(len(terms), newScratch, func(sc *nttScratch, i int) {
			t := terms[i]
			m := groupMessage(sk.lwe[t.first:t.first+t.r], t.u)
			noise := root.Derive(labelBKGroup, uint64(i))
			mask := noise
			if maskRoot != nil {
				mask = maskRoot.Derive(labelBKGroup, uint64(i))
			}
			encryptTRGSW(&bk.rows[i], m, sk, p.BKStdDev(), mask, noise, sc, compressed)
		})
	}

	ksk := &KeySwitchingKey{params: p, data: make([]torus.Torus32, ksTableLen(p))}
	t, basebit := p.KSLevels(), p.KSBaseLog()
	half := 1 << basebit / 2
	parallelFor(p.ExtractedLWEDimension(), func() struct{} { return struct{}{} },
		func(_ struct{}, i int) {
			noise := root.Derive(labelKSK, uint64(i))
			mask := noise
			if maskRoot != nil {
				mask = maskRoot.Derive(labelKSK, uint64(i))
			}
			si := torus.Torus32(sk.ext[i])
			for j := 1; j <= t; j++ {
				for m := 1; m <= half; m++ {
					mu := torus.Torus32(m) * si << (32 - j*basebit)
					encryptTLWE(ksk.Sample(i, j, m), sk.lwe, mu, p.LWEStdDev(), mask, noise)
				}
			}
		})
	ck = &CloudKey{params: p, bk: bk, ksk: ksk}
	if err := ck.Validate(); err != nil {
		return nil, maskSeed, errors.Join(errors.New("tfhe: internal error: generated cloud key is invalid"), err)
	}
	return ck, maskSeed, nil
}

// encryptTLWE sets dst = (a, ⟨a, key⟩ + e + mu) with a uniform from mask
// and e of standard deviation sigma from noise. len(dst.Value) = len(key)+1.
// mask and noise are one sampler but for a compressed cloud key, whose
// masks come from a public seed (compressed.go); with one sampler the
// draws are in the order they always were: the mask, then the noise.
func encryptTLWE(dst *TLWE, key []int32, mu torus.Torus32, sigma float64, mask, noise *torus.Sampler) {
	a := dst.Value[:len(key)]
	mask.UniformSlice(a)
	b := mu + noise.Gaussian(sigma)
	for i, s := range key {
		b += a[i] & -torus.Torus32(s) // binary key
	}
	dst.Value[len(key)] = b
}

// encryptTRLWEZero sets dst to a fresh encryption of zero under sk's TRLWE
// key: a_j uniform (from mask), b = Σ a_j·s_j + e (e from noise).
func encryptTRLWEZero(dst *TRLWE, sk *SecretKey, sigma float64, mask, noise *torus.Sampler, sc *nttScratch) {
	k := sk.params.GLWEDimension()
	for j := 0; j < k; j++ {
		mask.UniformSlice(dst.Value[j])
	}
	sc.dotKey(dst.Value[k], dst.Value[:k], sk.trlweNTT())
	noise.AddGaussian(dst.Value[k], sigma)
}

// encryptTRGSW sets dst = Z + m·H (CGGI20 Def. 3.6; row layout of TRGSW):
// row c·l + i holds m·g_i added to its column c. With bodyOnly (a
// compressed cloud key, whose masks are a public seed's stream and stay
// as drawn) a row of column c < k holds instead −m·g_i·s_c added to its
// body: the same phase, e − m·g_i·s_c, so the same TRGSW to every use of
// it, and the same distribution (uniform masks, the phase fixed).
func encryptTRGSW(dst *TRGSW, m int32, sk *SecretKey, sigma float64, mask, noise *torus.Sampler, sc *nttScratch, bodyOnly bool) {
	p := sk.params
	k, l := p.GLWEDimension(), p.BKLevels()
	g := p.BKGadget()
	for r := range dst.Rows {
		encryptTRLWEZero(&dst.Rows[r], sk, sigma, mask, noise, sc)
	}
	for c := 0; c <= k; c++ {
		for i := 0; i < l; i++ {
			mg := torus.Torus32(m) * g.Factor(i+1)
			row := &dst.Rows[c*l+i]
			if !bodyOnly || c == k {
				row.Value[c][0] += mg
				continue
			}
			body := row.Value[k]
			for t, s := range sk.trlwe[c] {
				body[t] -= mg & -torus.Torus32(s) // binary key: no branch on s
			}
		}
	}
}
