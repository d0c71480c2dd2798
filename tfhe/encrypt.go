package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// EncodeBool returns the torus encoding of a boolean message (DESIGN.md §2):
// true = +1/8, false = −1/8. It does not branch on b (a message bit being
// encrypted is secret): bit·1/4 − 1/8.
func EncodeBool(b bool) torus.Torus32 {
	const eighth = torus.Torus32(1 << 29)
	return torus.Torus32(boolBit(b))*(2*eighth) - eighth
}

// boolBit is b as 0 or 1. Go compiles this form to a zero extension of b's
// byte, not a branch, inlined or not (TestConstantTimeCode reads
// EncodeBool's code; the form with two returns branches when not inlined).
func boolBit(b bool) uint32 {
	var x uint32
	if b {
		x = 1
	}
	return x
}

// Encryptor encrypts under a secret key with its own random stream. It is
// not safe for concurrent use: give each goroutine its own (NewEncryptor is
// cheap). Only NewEncryptor and NewEncryptorFromSeed make a usable one: a
// zero Encryptor has no key, and its Encrypt methods panic (Params tells
// it apart: the zero Params).
type Encryptor struct {
	sk  *SecretKey
	smp *torus.Sampler
	sc  *nttScratch
}

// NewEncryptor returns an Encryptor for sk seeded from crypto/rand.
func NewEncryptor(sk *SecretKey) (*Encryptor, error) {
	return NewEncryptorFromSeed(sk, cryptoSeed())
}

// NewEncryptorFromSeed returns an Encryptor whose randomness is determined by
// seed and sk (for tests and reproducible experiments). The seed must be
// secret and used once: two encryptors of one key from one seed draw the
// same masks and noise, so the difference of their ciphertexts is the
// difference of the messages. (Encryptors of two keys from one seed draw
// unrelated ones.) An all-zero seed is an error.
func NewEncryptorFromSeed(sk *SecretKey, seed [torus.SeedSize]byte) (*Encryptor, error) {
	if err := sk.check(); err != nil {
		return nil, err
	}
	if err := checkSeed(seed); err != nil {
		return nil, err
	}
	// A copy of the key: UnmarshalBinary into sk later replaces sk's
	// slices and its ntt func (never writes into them), and this
	// Encryptor keeps the key, set and transform it was made with.
	own := *sk
	return &Encryptor{sk: &own, smp: torus.NewSamplerFromSeed(boundSeed(seed, labelEncryptorRoot, sk.params, sk, 0)), sc: newNTTScratch(sk.params.PolyDegree())}, nil
}

// Params returns the parameter set of the Encryptor's key; the zero Params
// for a nil or zero Encryptor.
func (e *Encryptor) Params() Params {
	if e == nil || e.sk == nil {
		return Params{}
	}
	return e.sk.params
}

// EncryptBool returns a fresh TLWE encryption of b (EncodeBool) under the
// TLWE key.
func (e *Encryptor) EncryptBool(b bool) *TLWE { return e.EncryptTLWE(EncodeBool(b)) }

// EncryptBoolTo sets dst (dimension n) to a fresh encryption of b.
func (e *Encryptor) EncryptBoolTo(dst *TLWE, b bool) { e.EncryptTLWETo(dst, EncodeBool(b)) }

// EncryptTLWE returns a fresh TLWE encryption of mu under the TLWE key, with
// noise σ_lwe.
func (e *Encryptor) EncryptTLWE(mu torus.Torus32) *TLWE {
	dst := NewTLWE(e.sk.params.LWEDimension())
	e.EncryptTLWETo(dst, mu)
	return dst
}

// EncryptTLWETo sets dst (dimension n; it panics otherwise) to a fresh
// encryption of mu under the TLWE key.
func (e *Encryptor) EncryptTLWETo(dst *TLWE, mu torus.Torus32) {
	if dst.Dim() != e.sk.params.LWEDimension() {
		panic(fmt.Sprintf("tfhe: EncryptTLWETo: dimension %d, want %d", dst.Dim(), e.sk.params.LWEDimension()))
	}
	encryptTLWE(dst, e.sk.lwe, mu, e.sk.params.LWEStdDev(), e.smp, e.smp)
}

// EncryptExtractedTLWETo sets dst (dimension k·N) to a fresh encryption of mu
// under the extracted key, with noise sigma in [2^−32, 1/2): the input of
// KeySwitch. Another dimension or sigma panics (a sigma below 2^−32, 0 or
// NaN would give a noiseless, insecure sample).
func (e *Encryptor) EncryptExtractedTLWETo(dst *TLWE, mu torus.Torus32, sigma float64) {
	if dst.Dim() != e.sk.params.ExtractedLWEDimension() {
		panic(fmt.Sprintf("tfhe: EncryptExtractedTLWETo: dimension %d, want %d", dst.Dim(), e.sk.params.ExtractedLWEDimension()))
	}
	if !validStdDev(sigma) {
		panic(fmt.Sprintf("tfhe: EncryptExtractedTLWETo: noise standard deviation %v not in [2^-32, 1/2)", sigma))
	}
	encryptTLWE(dst, e.sk.ext, mu, sigma, e.smp, e.smp)
}

// EncryptTRLWE returns a fresh TRLWE encryption of mu (N coefficients; it
// panics otherwise) with noise σ_bk.
func (e *Encryptor) EncryptTRLWE(mu torus.Poly) *TRLWE {
	p := e.sk.params
	dst := NewTRLWE(p.GLWEDimension(), p.PolyDegree())
	e.EncryptTRLWETo(dst, mu)
	return dst
}

// EncryptTRLWETo sets dst to a fresh TRLWE encryption of mu. mu may be one
// of dst's polynomials. dst (k+1 polynomials of N coefficients) and mu (N)
// of another shape panic.
func (e *Encryptor) EncryptTRLWETo(dst *TRLWE, mu torus.Poly) {
	p := e.sk.params
	if !dst.wellFormed(p.GLWEDimension(), p.PolyDegree()) || len(mu) != p.PolyDegree() {
		panic("tfhe: EncryptTRLWETo: TRLWE or message of the wrong shape")
	}
	// The fresh mask and body overwrite dst before mu is added: a message
	// aliasing one of them would be lost, and dst would encrypt noise.
	for _, q := range dst.Value {
		if &q[0] == &mu[0] {
			mu = append(torus.Poly(nil), mu...)
			break
		}
	}
	encryptTRLWEZero(dst, e.sk, p.BKStdDev(), e.smp, e.smp, e.sc)
	torus.AddTo(dst.B(), dst.B(), mu)
}

// EncryptTRGSW returns a fresh TRGSW encryption of the integer m with noise
// σ_bk (the form of the bootstrapping key's samples).
func (e *Encryptor) EncryptTRGSW(m int32) *TRGSW {
	p := e.sk.params
	dst := NewTRGSW(p.GLWEDimension(), p.BKLevels(), p.PolyDegree())
	encryptTRGSW(dst, m, e.sk, p.BKStdDev(), e.smp, e.smp, e.sc, false)
	return dst
}

// PhaseTLWE returns the phase b − ⟨a, s⟩ of ct under the TLWE key (when ct has
// dimension n) or the extracted key (dimension k·N). Other dimensions panic.
//
// A TLWE sample carries no parameter set, only its dimension: a sample of
// another set (or another key) of the same dimension gives a uniformly
// random phase, not an error. TFHELib128 and CuFHE80 share k·N = 1024, for
// example. Keep samples with the keys they came from; gates.DecryptBits
// checks the dimension n.
func (sk *SecretKey) PhaseTLWE(ct *TLWE) torus.Torus32 {
	var key []int32
	lwe, ext := sk.LWEKey(), sk.ExtractedLWEKey()
	switch ct.Dim() {
	case len(lwe):
		key = lwe
	case len(ext):
		key = ext
	default:
		panic(fmt.Sprintf("tfhe: PhaseTLWE: dimension %d is neither n=%d nor k·N=%d", ct.Dim(), len(lwe), len(ext)))
	}
	b := ct.B()
	for i, s := range key {
		b -= ct.Value[i] & -torus.Torus32(s)
	}
	return b
}

// DecryptBool returns the boolean ct encrypts (EncodeBool): true when its
// phase lies in (0, 1/2). ct may be under the TLWE key or the extracted key;
// a ciphertext of another dimension (another parameter set) or a nil one
// panics, as in PhaseTLWE. gates.DecryptBits checks its ciphertexts and
// returns an error instead.
func (sk *SecretKey) DecryptBool(ct *TLWE) bool { return sk.PhaseTLWE(ct).Signed() > 0 }

// PhaseTRLWE returns the phase b − Σ a_j·s_j of ct, which must have the
// key's shape (k+1 polynomials of N coefficients); it panics otherwise, or
// for a nil ct.
func (sk *SecretKey) PhaseTRLWE(ct *TRLWE) torus.Poly {
	p := sk.params
	if !ct.wellFormed(p.GLWEDimension(), p.PolyDegree()) {
		panic("tfhe: PhaseTRLWE: TRLWE of the wrong shape")
	}
	dst := torus.NewPoly(p.PolyDegree())
	newNTTScratch(p.PolyDegree()).dotKey(dst, ct.Value[:p.GLWEDimension()], sk.trlweNTT())
	torus.SubTo(dst, ct.B(), dst)
	return dst
}
