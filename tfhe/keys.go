package tfhe

import (
	"errors"
	"fmt"
	"sync"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// SecretKey holds the binary TLWE key s ∈ {0,1}^n and the binary TRLWE key
// (s_0, …, s_{k−1}) ∈ B_N[X]^k. It is safe for concurrent use: nothing
// modifies a key but UnmarshalBinary, which replaces the key it is called
// on and must not run beside other use of it. An Encryptor keeps the key it
// was made with.
type SecretKey struct {
	params Params
	// The key's bits, behind a pointer: fmt prints a pointer it meets
	// inside another value as an address, and it reads a SecretKey held
	// by value in an unexported struct field by reflection, calling no
	// Format. With the slices here, %v of such a struct printed every bit.
	*keyBits

	// ntt returns trlwe in the NTT domain of internalPlan(N), computed once
	// (sync.OnceValue): a func, not a sync.Once, so that a SecretKey value
	// holds no lock and its Format can take a value receiver.
	ntt func() []smallntt.NTTPoly
}

// keyBits are the coefficients of a SecretKey.
type keyBits struct {
	lwe   []int32   // n
	trlwe [][]int32 // k × N, views of ext
	ext   []int32   // the extracted key s'_{j·N+i} = s_j[i], k·N
}

// String names the key's parameter set and nothing of the key, so that a
// key passed to a log or an error message by mistake does not leak: fmt
// prints this for every verb (Format), %#v included (GoString), for a
// *SecretKey and a SecretKey value alike (value receivers; fmt prints a nil
// *SecretKey as <nil>). Inside an unexported field of a struct, where fmt
// calls no method, a SecretKey value prints its parameters and an address.
func (sk SecretKey) String() string { return "tfhe.SecretKey(" + sk.params.Name() + ", redacted)" }

// GoString is String.
func (sk SecretKey) GoString() string { return sk.String() }

// Format writes String whatever the verb and flags.
func (sk SecretKey) Format(f fmt.State, _ rune) { fmt.Fprint(f, sk.String()) }

// Params returns the key's parameter set; the zero Params for a nil key.
func (sk *SecretKey) Params() Params {
	if sk == nil {
		return Params{}
	}
	return sk.params
}

// LWEKey returns the TLWE key (n bits as int32). It aliases the key: do not
// modify it.
func (sk *SecretKey) LWEKey() []int32 {
	if sk.keyBits == nil {
		return nil
	}
	return sk.lwe
}

// TRLWEKey returns the k TRLWE key polynomials. They alias the key.
func (sk *SecretKey) TRLWEKey() [][]int32 {
	if sk.keyBits == nil {
		return nil
	}
	return sk.trlwe
}

// ExtractedLWEKey returns the TLWE key of dimension k·N under which sample
// extraction outputs are (s'_{j·N+i} = s_j[i]). It aliases the key.
func (sk *SecretKey) ExtractedLWEKey() []int32 {
	if sk.keyBits == nil {
		return nil
	}
	return sk.ext
}

func (sk *SecretKey) trlweNTT() []smallntt.NTTPoly {
	if sk.ntt == nil { // not from newSecretKey or UnmarshalBinary
		return keyNTT(internalPlan(sk.params.PolyDegree()), sk.trlwe)
	}
	return sk.ntt()
}

// lazyNTT returns the ntt func of a key with these polynomials. It holds
// the slices, not the key: a copy of a SecretKey value shares its func, and
// a func bound to the original would read the original's fields, which
// UnmarshalBinary replaces, whenever it first runs.
func lazyNTT(trlwe [][]int32) func() []smallntt.NTTPoly {
	return sync.OnceValue(func() []smallntt.NTTPoly {
		return keyNTT(internalPlan(len(trlwe[0])), trlwe)
	})
}

func (sk *SecretKey) check() error {
	if sk == nil {
		return errors.New("tfhe: nil secret key")
	}
	if err := sk.params.check(); err != nil {
		return err
	}
	if sk.keyBits == nil || len(sk.lwe) != sk.params.LWEDimension() || len(sk.ext) != sk.params.ExtractedLWEDimension() {
		return errors.New("tfhe: secret key is incomplete")
	}
	return nil
}

// newSecretKey allocates a zero key.
func newSecretKey(p Params) *SecretKey {
	k, n := p.GLWEDimension(), p.PolyDegree()
	sk := &SecretKey{params: p, keyBits: &keyBits{lwe: make([]int32, p.LWEDimension()), ext: make([]int32, k*n)}}
	sk.trlwe = make([][]int32, k)
	for j := range sk.trlwe {
		sk.trlwe[j] = sk.ext[j*n : (j+1)*n : (j+1)*n] // the extracted key is the concatenation
	}
	sk.ntt = lazyNTT(sk.trlwe)
	return sk
}

// BootstrappingKey is the bootstrapping key BK_i = TRGSW(s_i), i < n, in
// coefficient form — its canonical form, independent of any NTT. NTT returns
// (and caches while in use) its transform for a given plan.
//
// With grouping g > 1 (WithGrouping) it holds, for each group of g key bits
// (the last may be shorter, r bits), the 2^r − 1 samples TRGSW([s = u]),
// u = 1 … 2^r − 1, one after another (grouped.go).
//
// A BootstrappingKey is immutable and safe for concurrent use.
type BootstrappingKey struct {
	params   Params
	grouping int
	rows     []TRGSW         // bkSamples(n, grouping) samples
	data     []torus.Torus32 // backing: len(rows) × (k+1)·l × (k+1) × N

	mu    sync.Mutex
	cache map[[32]byte]*nttCacheEntry // by Order() digest, see NTT
}

// Params returns the key's parameter set.
func (bk *BootstrappingKey) Params() Params {
	if bk == nil {
		return Params{}
	}
	return bk.params
}

// Len returns the number of TRGSW samples: n, or more with grouping.
func (bk *BootstrappingKey) Len() int {
	if bk == nil {
		return 0
	}
	return len(bk.rows)
}

// Grouping returns the key's grouping factor: 1 for the plain key of one
// TRGSW per key bit.
func (bk *BootstrappingKey) Grouping() int {
	if bk == nil {
		return 0
	}
	return bk.grouping
}

// TRGSW returns sample i (aliasing the key: do not modify).
func (bk *BootstrappingKey) TRGSW(i int) *TRGSW { return &bk.rows[i] }

func newBootstrappingKey(p Params, g int) *BootstrappingKey {
	k, l, N := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	n := bkSamples(p.LWEDimension(), g)
	rowsPer := (k + 1) * l
	per := rowsPer * (k + 1) * N
	bk := &BootstrappingKey{params: p, grouping: g, rows: make([]TRGSW, n), data: make([]torus.Torus32, n*per)}
	polys := make([]torus.Poly, n*rowsPer*(k+1))
	trlwes := make([]TRLWE, n*rowsPer)
	for i := range bk.rows {
		for r := 0; r < rowsPer; r++ {
			for c := 0; c <= k; c++ {
				o := i*per + (r*(k+1)+c)*N
				polys[(i*rowsPer+r)*(k+1)+c] = torus.Poly(bk.data[o : o+N : o+N])
			}
			q := (i*rowsPer + r) * (k + 1)
			trlwes[i*rowsPer+r].Value = polys[q : q+k+1 : q+k+1]
		}
		bk.rows[i].Rows = trlwes[i*rowsPer : (i+1)*rowsPer : (i+1)*rowsPer]
	}
	return bk
}

func (bk *BootstrappingKey) check(p Params) error {
	if bk == nil {
		return errors.New("tfhe: nil bootstrapping key")
	}
	if !bk.params.Equal(p) {
		b, q := DistinctNames(bk.params, p)
		return fmt.Errorf("tfhe: bootstrapping key is for %s, not %s", b, q)
	}
	if err := checkGrouping(p, bk.grouping); err != nil {
		return err
	}
	k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	count := bkSamples(p.LWEDimension(), bk.grouping)
	if len(bk.rows) != count || len(bk.data) != count*(k+1)*l*(k+1)*n {
		return errors.New("tfhe: bootstrapping key is incomplete")
	}
	for i := range bk.rows {
		if !bk.rows[i].wellFormed(k, l, n) {
			return fmt.Errorf("tfhe: bootstrapping key sample %d is malformed", i)
		}
	}
	return nil
}

// KeySwitchingKey switches TLWE samples from the extracted key (dimension
// k·N) to the TLWE key (dimension n) with the table-driven method of the
// TFHE library: for every input coordinate i, digit level j = 1..t and digit
// magnitude m = 1..base/2 it holds a fresh TLWE encryption under s of
// m·s'_i/base^j. Key switching then adds or subtracts one table row per
// nonzero signed digit — no multiplication, and the noise added per digit
// does not depend on the digit's value.
//
// A KeySwitchingKey is immutable and safe for concurrent use.
type KeySwitchingKey struct {
	params Params
	data   []torus.Torus32 // ((i·t + (j−1))·(base/2) + (m−1))·(n+1) + coordinate
}

// Params returns the key's parameter set.
func (ksk *KeySwitchingKey) Params() Params {
	if ksk == nil {
		return Params{}
	}
	return ksk.params
}

func ksTableLen(p Params) int {
	return p.ExtractedLWEDimension() * p.KSLevels() * (1 << p.KSBaseLog() / 2) * (p.LWEDimension() + 1)
}

func (ksk *KeySwitchingKey) check(p Params) error {
	if ksk == nil {
		return errors.New("tfhe: nil key-switching key")
	}
	if !ksk.params.Equal(p) {
		k, q := DistinctNames(ksk.params, p)
		return fmt.Errorf("tfhe: key-switching key is for %s, not %s", k, q)
	}
	if len(ksk.data) != ksTableLen(p) {
		return errors.New("tfhe: key-switching key is incomplete")
	}
	return nil
}

// Sample returns the table entry for input coordinate i (0..k·N−1), level j
// (1..t) and digit magnitude m (1..base/2) as a TLWE sample of dimension n
// aliasing the key (do not modify). Indices out of range panic, as a
// slice's do.
func (ksk *KeySwitchingKey) Sample(i, j, m int) *TLWE {
	p := ksk.params
	half := 1 << p.KSBaseLog() / 2
	if i < 0 || i >= p.ExtractedLWEDimension() || j < 1 || j > p.KSLevels() || m < 1 || m > half {
		panic(fmt.Sprintf("tfhe: KeySwitchingKey.Sample(%d, %d, %d) out of range (i < %d, 1 ≤ j ≤ %d, 1 ≤ m ≤ %d)",
			i, j, m, p.ExtractedLWEDimension(), p.KSLevels(), half))
	}
	w := p.LWEDimension() + 1
	o := ((i*p.KSLevels()+j-1)*half + m - 1) * w
	return &TLWE{Value: ksk.data[o : o+w : o+w]}
}

// CloudKey is the public evaluation key: the bootstrapping key and the
// key-switching key. It is safe for concurrent use: nothing modifies a key
// but UnmarshalBinary, which replaces the key it is called on and must not
// run beside other use of it (engines built from it keep the keys they
// were built with).
type CloudKey struct {
	params Params
	bk     *BootstrappingKey
	ksk    *KeySwitchingKey
}

// Params returns the key's parameter set; the zero Params for a nil key.
func (ck *CloudKey) Params() Params {
	if ck == nil {
		return Params{}
	}
	return ck.params
}

// BootstrappingKey returns the bootstrapping key: nil for a nil or zero
// key, whose Params, Len and Grouping are then zero.
func (ck *CloudKey) BootstrappingKey() *BootstrappingKey {
	if ck == nil {
		return nil
	}
	return ck.bk
}

// Grouping returns the bootstrapping key's grouping factor (WithGrouping);
// 0 for a nil or zero CloudKey.
func (ck *CloudKey) Grouping() int {
	if ck == nil || ck.bk == nil {
		return 0
	}
	return ck.bk.grouping
}

// KeySwitchingKey returns the key-switching key: nil for a nil or zero key.
func (ck *CloudKey) KeySwitchingKey() *KeySwitchingKey {
	if ck == nil {
		return nil
	}
	return ck.ksk
}

// Validate reports whether ck is complete and consistent: non-nil, made for
// a valid parameter set, with both keys of the right shape.
func (ck *CloudKey) Validate() error {
	if ck == nil {
		return errors.New("tfhe: nil cloud key")
	}
	if err := ck.params.check(); err != nil {
		return fmt.Errorf("tfhe: cloud key: %w", err)
	}
	if err := ck.bk.check(ck.params); err != nil {
		return err
	}
	return ck.ksk.check(ck.params)
}
