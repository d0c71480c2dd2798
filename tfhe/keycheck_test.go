package tfhe

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckCloudKey: a cloud key checks against the secret key it was made
// from (plain and grouped, every named set), and not against another
// secret key of the same set, nor when its key-switching key or its
// bootstrapping key alone comes from another secret key.
func TestCheckCloudKey(t *testing.T) {
	for _, p := range heavySets(t) {
		for g := 1; g <= 2; g++ {
			kp := keyCache(p, g)
			assert.NoErrorf(t, kp.sk.CheckCloudKey(kp.ck), "%s g=%d: the pair's own keys", p.Name(), g)
		}
	}
	p := toyParams
	for g := 1; g <= MaxGrouping; g++ {
		a := keyCache(p, 1).sk
		b, err := GenerateSecretKeyFromSeed(p, seedOf("other secret key", g))
		require.NoError(t, err)
		ca, err := GenerateCloudKeyFromSeed(a, seedOf("check a", g), WithGrouping(g))
		require.NoError(t, err)
		cb, err := GenerateCloudKeyFromSeed(b, seedOf("check b", g), WithGrouping(g))
		require.NoError(t, err)
		assert.NoErrorf(t, a.CheckCloudKey(ca), "g=%d: own pair", g)
		for _, tc := range []struct {
			name string
			ck   *CloudKey
		}{
			{"another secret key's cloud key", cb},
			{"another secret key's key-switching key", &CloudKey{params: p, bk: ca.bk, ksk: cb.ksk}},
			{"another secret key's bootstrapping key", &CloudKey{params: p, bk: cb.bk, ksk: ca.ksk}},
		} {
			if err := a.CheckCloudKey(tc.ck); !errors.Is(err, ErrKeyMismatch) {
				t.Errorf("g=%d, %s: %v, want ErrKeyMismatch", g, tc.name, err)
			}
		}
	}
	// Not a mismatch but an error all the same: an invalid key, another set.
	a := keyCache(p, 1)
	for _, tc := range []struct {
		name string
		sk   *SecretKey
		ck   *CloudKey
	}{
		{"nil cloud key", a.sk, nil},
		{"zero cloud key", a.sk, &CloudKey{}},
		{"nil secret key", nil, a.ck},
		{"another set", keyCache(CuFHE80, 1).sk, a.ck},
	} {
		if err := tc.sk.CheckCloudKey(tc.ck); err == nil || errors.Is(err, ErrKeyMismatch) {
			t.Errorf("%s: %v, want an error other than ErrKeyMismatch", tc.name, err)
		}
	}
}

// TestGroupTerms: groupTerms walks GenerateCloudKey's order of groups and
// terms, bkSamples of them.
func TestGroupTerms(t *testing.T) {
	for _, tc := range []struct{ n, g int }{{7, 1}, {7, 2}, {7, 3}, {630, 3}, {500, 2}} {
		terms := groupTerms(tc.n, tc.g)
		idx := 0
		for first := 0; first < tc.n; first += tc.g {
			r := min(tc.g, tc.n-first)
			for u := 1; u < 1<<r; u++ {
				if idx >= len(terms) || terms[idx] != (groupTerm{first, r, u}) {
					t.Fatalf("n=%d g=%d: sample %d is %+v, want %+v", tc.n, tc.g, idx, terms[min(idx, len(terms)-1)], groupTerm{first, r, u})
				}
				idx++
			}
		}
		if idx != len(terms) || idx != bkSamples(tc.n, tc.g) {
			t.Fatalf("n=%d g=%d: %d samples walked, %d listed, bkSamples %d", tc.n, tc.g, idx, len(terms), bkSamples(tc.n, tc.g))
		}
	}
}

// TestSecretKeyFormatRedacts: no fmt verb prints a secret key's bits, only
// its parameter set's name, for a key alone, inside a struct and nil.
func TestSecretKeyFormatRedacts(t *testing.T) {
	sk := testKeys(toyParams).sk
	want := "tfhe.SecretKey(" + toyParams.Name() + ", redacted)"
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d", "%q"} {
		if got := fmt.Sprintf(verb, sk); got != want {
			t.Errorf("Sprintf(%q, sk) = %q, want %q", verb, got, want)
		}
	}
	if got := fmt.Sprintf("%+v", struct{ K *SecretKey }{sk}); got != "{K:"+want+"}" {
		t.Errorf("a struct holding the key prints %q", got)
	}
	// The value, not only the pointer.
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		if got := fmt.Sprintf(verb, *sk); got != want {
			t.Errorf("Sprintf(%q, *sk) = %q, want %q", verb, got, want)
		}
	}
	var nilKey *SecretKey
	if got := fmt.Sprint(nilKey); got != "<nil>" {
		t.Errorf("nil key prints %q", got)
	}
	// Held by value in an unexported field, where fmt reads the fields by
	// reflection and calls no method of the key.
	type holder struct{ sk SecretKey }
	bitsDec := strings.Trim(fmt.Sprint(sk.LWEKey()[:24]), "[]") // %v, %+v
	bitsHex := strings.Trim(fmt.Sprintf("%#x", sk.LWEKey()[:24]), "[]")
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		got := fmt.Sprintf(verb, holder{*sk})
		if strings.Contains(got, bitsDec) || strings.Contains(got, bitsHex) || strings.Contains(got, "lwe") {
			t.Errorf("Sprintf(%q) of a struct holding the key by value prints its bits: %.200q", verb, got)
		}
	}
}

// TestParamsStringCustom: a set outside ParamSets prints its declared
// security as unverified; a named set as is.
func TestParamsStringCustom(t *testing.T) {
	if s := toyParams.String(); !strings.Contains(s, "custom set, declared 0-bit, unverified") {
		t.Errorf("toy set: %s", s)
	}
	lit := TFHELib128.Literal()
	if s := MustNewParams(lit).String(); !strings.Contains(s, "~120-bit") || strings.Contains(s, "unverified") {
		t.Errorf("TFHELib128 rebuilt from its literal: %s", s)
	}
	lit.Name = "mine"
	if s := MustNewParams(lit).String(); !strings.Contains(s, "custom set, declared 120-bit, unverified") {
		t.Errorf("TFHELib128 renamed: %s", s)
	}
}

// TestZeroSeedRefused: the FromSeed functions refuse an all-zero seed.
func TestZeroSeedRefused(t *testing.T) {
	var zero [torus.SeedSize]byte
	if _, err := GenerateSecretKeyFromSeed(toyParams, zero); !errors.Is(err, errZeroSeed) {
		t.Errorf("GenerateSecretKeyFromSeed: %v", err)
	}
	sk := testKeys(toyParams).sk
	if _, err := GenerateCloudKeyFromSeed(sk, zero); !errors.Is(err, errZeroSeed) {
		t.Errorf("GenerateCloudKeyFromSeed: %v", err)
	}
	if _, err := NewEncryptorFromSeed(sk, zero); !errors.Is(err, errZeroSeed) {
		t.Errorf("NewEncryptorFromSeed: %v", err)
	}
}

// TestMismatchNamesBothSets: two sets of one name (a custom set and one
// derived from it by Literal) are told apart in full in the errors of a
// mismatch; sets of different names by name.
func TestMismatchNamesBothSets(t *testing.T) {
	lit := toyParams.Literal()
	lit.LWEDimension++
	other := MustNewParams(lit) // toyParams' name, another n
	sk := keyCache(toyParams, 1).sk
	skOther, err := GenerateSecretKeyFromSeed(other, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/mismatch-names", 0))
	require.NoError(t, err)
	ckOther, err := GenerateCloudKeyFromSeed(skOther, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/mismatch-names", 1))
	require.NoError(t, err)
	err = sk.CheckCloudKey(ckOther)
	wantN := fmt.Sprintf("n=%d", toyParams.LWEDimension())
	otherN := fmt.Sprintf("n=%d", other.LWEDimension())
	if err == nil || !strings.Contains(err.Error(), wantN) || !strings.Contains(err.Error(), otherN) {
		t.Errorf("CheckCloudKey of a same-named set: %v, want both sets in full (%s, %s)", err, wantN, otherN)
	}
	if _, err := NewEvaluator(toyParams, butterfly(t, toyParams.PolyDegree()), ckOther); err == nil || !strings.Contains(err.Error(), otherN) {
		t.Errorf("NewEvaluator with a same-named set's key: %v, want the sets in full", err)
	}
	if a, b := DistinctNames(toyParams, CuFHE80); a != toyParams.Name() || b != CuFHE80.Name() {
		t.Errorf("names of two differently named sets: %q, %q", a, b)
	}
	// Sets of one name that String prints alike (σ past three digits).
	lit = toyParams.Literal()
	lit.LWEStdDev = math.Nextafter(lit.LWEStdDev, 1)
	near := MustNewParams(lit)
	if a, b := DistinctNames(toyParams, near); a == b || !strings.Contains(a, "LWEStdDev") {
		t.Errorf("names of two sets String prints alike: %q, %q", a, b)
	}
}

// TestSeedBoundToSet: one seed gives unrelated keys for two sets, and
// unrelated cloud keys and encryptors for two secret keys. A seed used to
// give CuFHE80 and TFHELib128 the same TRLWE key and LWE keys sharing a
// prefix.
func TestSeedBoundToSet(t *testing.T) {
	seed := torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/one-seed", 0)
	a, err := GenerateSecretKeyFromSeed(TFHELib128, seed)
	require.NoError(t, err)
	b, err := GenerateSecretKeyFromSeed(CuFHE80, seed)
	require.NoError(t, err)
	agree := func(x, y []int32) int {
		n := 0
		for i := range min(len(x), len(y)) {
			if x[i] == y[i] {
				n++
			}
		}
		return n
	}
	// Independent uniform bits agree on about half; 60% is over 6σ.
	if n, m := agree(a.LWEKey(), b.LWEKey()), min(len(a.LWEKey()), len(b.LWEKey())); n > m*6/10 {
		t.Errorf("TFHELib128's and CuFHE80's LWE keys from one seed agree on %d of %d bits", n, m)
	}
	if n, m := agree(a.ExtractedLWEKey(), b.ExtractedLWEKey()), len(a.ExtractedLWEKey()); n > m*6/10 {
		t.Errorf("TFHELib128's and CuFHE80's TRLWE keys from one seed agree on %d of %d bits", n, m)
	}
	// Two secret keys of one set, one seed for their cloud keys and
	// encryptors: the masks differ.
	c := testKeys(toyParams).sk
	d, err := GenerateSecretKeyFromSeed(toyParams, torus.DeriveSeed(seed, "other", 0))
	require.NoError(t, err)
	ca, err := GenerateCloudKeyFromSeed(c, seed)
	require.NoError(t, err)
	cb, err := GenerateCloudKeyFromSeed(d, seed)
	require.NoError(t, err)
	if x, y := ca.KeySwitchingKey().Sample(0, 1, 1), cb.KeySwitchingKey().Sample(0, 1, 1); slices.Equal(x.Value[:4], y.Value[:4]) {
		t.Error("the cloud keys of two secret keys from one seed share key-switching masks")
	}
	ea, err := NewEncryptorFromSeed(c, seed)
	require.NoError(t, err)
	eb, err := NewEncryptorFromSeed(d, seed)
	require.NoError(t, err)
	if x, y := ea.EncryptBool(true), eb.EncryptBool(true); slices.Equal(x.Value[:4], y.Value[:4]) {
		t.Error("the encryptors of two secret keys from one seed draw the same masks")
	}
}
