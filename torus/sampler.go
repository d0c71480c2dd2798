package torus

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
)

// SeedSize is the size of a Sampler seed in bytes.
const SeedSize = 32

// Sampler draws uniform, binary and Gaussian values from a ChaCha8 stream
// (math/rand/v2's ChaCha8, a cryptographically secure generator of the
// standard library). A Sampler built from the same seed always yields the
// same values, which tests rely on; NewSampler seeds one from crypto/rand.
//
// A Sampler is not safe for concurrent use. Derive gives independent,
// reproducible child samplers for parallel work. Only NewSampler and
// NewSamplerFromSeed make a usable one: a zero Sampler has no stream or
// seed, and its drawing methods and Derive panic.
//
// Gaussian values are continuous normal samples scaled and rounded to the
// torus, as in the TFHE library, drawn in time that does not depend on the
// value (normalPair: Box–Muller by a fixed sequence of operations, two
// normal values from two 64-bit words) on targets with floating-point
// hardware. The time of a call does depend on whether it uses the second
// value of the previous pair, which says nothing of either value.
type Sampler struct {
	// seed is behind a pointer: fmt prints a pointer it meets inside
	// another value as an address, and it reads a Sampler held by value in
	// an unexported struct field by reflection, calling no Format. As an
	// array here, %v of such a struct printed the seed.
	seed *[SeedSize]byte
	src  *mrand.ChaCha8
	// spare is behind a pointer, as the stream is, so that copies of a
	// Sampler share it: copies with one of their own would each return
	// the same value, and two ciphertexts with equal noise give an exact
	// linear equation in the key.
	spare *spareNormal
}

// spareNormal is the second normal value of the last pair, unused if !ok.
type spareNormal struct {
	z  float64
	ok bool
}

// NewSampler returns a Sampler seeded from crypto/rand.
func NewSampler() *Sampler {
	var seed [SeedSize]byte
	rand.Read(seed[:]) // never fails (Go ≥ 1.24: it crashes the program instead)
	return NewSamplerFromSeed(seed)
}

// NewSamplerFromSeed returns a deterministic Sampler.
func NewSamplerFromSeed(seed [SeedSize]byte) *Sampler {
	return &Sampler{seed: &seed, src: mrand.NewChaCha8(seed), spare: new(spareNormal)}
}

// String says what s is and nothing of its seed, from which every value it
// draws follows (an encryptor's noise, a key's bits): fmt prints this for
// every verb (Format), %#v included (GoString), for a *Sampler and a
// Sampler value alike (value receivers). Inside an unexported field of a
// struct, where fmt calls no method, a Sampler value prints three addresses.
func (Sampler) String() string { return "torus.Sampler(redacted)" }

// GoString is String.
func (s Sampler) GoString() string { return s.String() }

// Format writes String whatever the verb and flags.
func (s Sampler) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// Derive returns a new Sampler whose seed is SHA-256(seed ‖ label ‖ index):
// independent of the parent's stream position, so work split over goroutines
// gives the same values whatever the split.
// A zero Sampler panics: it has no seed to derive from. (Before the seed
// moved behind a pointer, it derived from the all-zero seed, which gives
// streams anybody can reproduce; now it would dereference nil.)
func (s *Sampler) Derive(label string, index uint64) *Sampler {
	if s.seed == nil {
		panic("torus: Derive of a zero Sampler (use NewSampler or NewSamplerFromSeed)")
	}
	return NewSamplerFromSeed(DeriveSeed(*s.seed, label, index))
}

// DeriveSeed returns SHA-256(seed ‖ len(label) ‖ label ‖ index).
func DeriveSeed(seed [SeedSize]byte, label string, index uint64) [SeedSize]byte {
	h := sha256.New()
	h.Write(seed[:])
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(label)))
	h.Write(b[:])
	h.Write([]byte(label))
	binary.LittleEndian.PutUint64(b[:], index)
	h.Write(b[:])
	var out [SeedSize]byte
	h.Sum(out[:0])
	return out
}

// Uniform returns a uniform torus element.
func (s *Sampler) Uniform() Torus32 { return Torus32(s.src.Uint64()) }

// UniformSlice fills dst with uniform torus elements.
func (s *Sampler) UniformSlice(dst []Torus32) {
	i := 0
	for ; i+1 < len(dst); i += 2 {
		x := s.src.Uint64()
		dst[i], dst[i+1] = Torus32(x), Torus32(x>>32)
	}
	if i < len(dst) {
		dst[i] = Torus32(s.src.Uint64())
	}
}

// Bit returns a uniform bit 0 or 1.
func (s *Sampler) Bit() int32 { return int32(s.src.Uint64() & 1) }

// BinarySlice fills dst with uniform bits 0 or 1 (a TFHE binary key).
func (s *Sampler) BinarySlice(dst []int32) {
	for i := 0; i < len(dst); i += 64 {
		x := s.src.Uint64()
		for j := i; j < len(dst) && j < i+64; j++ {
			dst[j] = int32(x & 1)
			x >>= 1
		}
	}
}

// Gaussian returns a sample of the centered normal distribution of standard
// deviation sigma (a fraction of the torus, e.g. 2^−15), rounded to the
// nearest Torus32, in time independent of the value drawn for any |sigma| ≤
// 4096 (beyond that, and for NaN or ±Inf, FromFloat64's branches round it).
// The normal value is cut at 8.57 standard deviations (probability about
// 10^−17).
func (s *Sampler) Gaussian(sigma float64) Torus32 {
	if !(math.Abs(sigma) <= maxRoundSigma) {
		return FromFloat64(s.normal() * sigma)
	}
	return gaussianTorus(s.normal(), sigma)
}

// AddGaussian adds an independent Gaussian sample of standard deviation
// sigma to every element of dst: the values len(dst) calls of Gaussian
// would return, from the same words of the stream
// (TestAddGaussianIsGaussian). It takes them a pair at a time straight
// from normalPair, not one by one through the spare value and the sigma
// check: key generation draws N values a TRLWE sample, and that
// bookkeeping cost some 15% of each. A spare left by an earlier call (its
// first value) and an odd last value still go through the spare, as in
// Gaussian.
func (s *Sampler) AddGaussian(dst []Torus32, sigma float64) {
	if !(math.Abs(sigma) <= maxRoundSigma) || len(dst) == 0 {
		for i := range dst {
			dst[i] += s.Gaussian(sigma) // FromFloat64 rounds them
		}
		return
	}
	i := 0
	if s.spare.ok {
		dst[0] += gaussianTorus(s.normal(), sigma)
		i = 1
	}
	for ; i+1 < len(dst); i += 2 {
		z0, z1 := normalPair(s.src.Uint64(), s.src.Uint64())
		dst[i] += gaussianTorus(z0, sigma)
		dst[i+1] += gaussianTorus(z1, sigma)
	}
	if i < len(dst) {
		dst[i] += gaussianTorus(s.normal(), sigma)
	}
}

// normal returns a standard normal value: the second of the last pair
// normalPair made, or the first of a new pair.
func (s *Sampler) normal() float64 {
	if sp := s.spare; sp.ok {
		sp.ok = false
		return sp.z
	}
	z0, z1 := normalPair(s.src.Uint64(), s.src.Uint64())
	*s.spare = spareNormal{z1, true}
	return z0
}
