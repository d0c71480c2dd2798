package tfhe

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// TestCloudKeyOneEncoding: a plain key is version 1; the same key written
// as version 2 with grouping 1 is refused, so that every key has one
// encoding (MarshalBinary's) and decoding then encoding gives the bytes
// back.
func TestCloudKeyOneEncoding(t *testing.T) {
	kp := testKeys(toyParams)
	b, err := kp.ck.MarshalBinary()
	require.NoError(t, err)
	params := appendParams(nil, toyParams)
	head := len(appendHeader(nil, kindCloudKey))
	v2 := appendHeaderVersion(nil, kindCloudKey, marshalVersionGrouped)
	v2 = append(v2, params...)
	v2 = binary.LittleEndian.AppendUint16(v2, 1)
	v2 = append(v2, b[head+len(params):]...)
	var ck CloudKey
	if err := ck.UnmarshalBinary(v2); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "grouping 1") {
		t.Errorf("version 2 with grouping 1: %v, want ErrFormat", err)
	}
	require.NoError(t, ck.UnmarshalBinary(b), "the key as written")
}

// TestNilAndZeroReceivers: documented errors or values, no panics.
func TestNilAndZeroReceivers(t *testing.T) {
	plan, err := smallntt.NewPlan(toyParams.PolyDegree(), smallntt.Hybrid, 16, 16)
	require.NoError(t, err)
	if _, err := NewNTTTRGSW(plan, &TRGSW{Rows: []TRLWE{{}}}); err == nil {
		t.Error("NewNTTTRGSW of a TRGSW of empty rows succeeded")
	}
	if _, err := (*BootstrappingKey)(nil).NTT(plan); err == nil {
		t.Error("a nil BootstrappingKey's NTT succeeded")
	}
	if g := (&CloudKey{}).Grouping(); g != 0 {
		t.Errorf("a zero CloudKey's grouping %d, want 0", g)
	}
	if g := (*CloudKey)(nil).Grouping(); g != 0 {
		t.Errorf("a nil CloudKey's grouping %d, want 0", g)
	}
	for _, m := range []interface{ MarshalBinary() ([]byte, error) }{
		NewTLWE(maxTLWEDimension + 1), NewTRLWE(maxGLWEDimension+1, 256), NewTRLWE(1, 8192),
	} {
		if _, err := m.MarshalBinary(); err == nil {
			t.Errorf("%T of a shape UnmarshalBinary refuses was written", m)
		}
	}
	var empty torus.Poly
	torus.MulXaTo(empty, empty, 5) // no division by zero
	torus.MulXaMinusOneTo(empty, empty, -3)
}

// TestMisusePanics: arguments that no caller can mean panic with the
// function's name rather than computing nonsense.
func TestMisusePanics(t *testing.T) {
	kp := testKeys(toyParams)
	enc, err := NewEncryptor(kp.sk)
	require.NoError(t, err)
	half := 1 << toyParams.KSBaseLog() / 2
	cases := map[string]func(){
		"Sample m above base/2":        func() { kp.ck.KeySwitchingKey().Sample(0, 1, half+1) },
		"Sample j 0":                   func() { kp.ck.KeySwitchingKey().Sample(0, 0, 1) },
		"Sample i beyond k·N":          func() { kp.ck.KeySwitchingKey().Sample(toyParams.ExtractedLWEDimension(), 1, 1) },
		"EncryptExtractedTLWETo NaN":   func() { enc.EncryptExtractedTLWETo(NewTLWE(toyParams.ExtractedLWEDimension()), 0, math.NaN()) },
		"EncryptExtractedTLWETo 0":     func() { enc.EncryptExtractedTLWETo(NewTLWE(toyParams.ExtractedLWEDimension()), 0, 0) },
		"NoiseEstimateGrouped(4)":      func() { toyParams.NoiseEstimateGrouped(MaxGrouping + 1) },
		"NoiseEstimate of zero Params": func() { Params{}.NoiseEstimate() },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	// In range: the last entry of the table.
	last := kp.ck.KeySwitchingKey().Sample(toyParams.ExtractedLWEDimension()-1, toyParams.KSLevels(), half)
	if last.Dim() != toyParams.LWEDimension() {
		t.Errorf("the last table entry has dimension %d", last.Dim())
	}
}

// TestEncryptTRLWEAliasedMessage: a message that is one of the destination's
// own polynomials (exact aliasing, which torus.Poly's functions allow) is
// encrypted, not overwritten by the fresh mask or body before it is added.
func TestEncryptTRLWEAliasedMessage(t *testing.T) {
	kp := testKeys(toyParams)
	enc, err := NewEncryptorFromSeed(kp.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/aliased-message", 0))
	require.NoError(t, err)
	k, n := toyParams.GLWEDimension(), toyParams.PolyDegree()
	for _, j := range []int{k, 0} { // the body, a mask polynomial
		ct := NewTRLWE(k, n)
		for i := range ct.Value[j] {
			ct.Value[j][i] = torus.Torus32(i%4) << 30
		}
		want := append(torus.Poly(nil), ct.Value[j]...)
		enc.EncryptTRLWETo(ct, ct.Value[j])
		phase := kp.sk.PhaseTRLWE(ct)
		for i := range want {
			if d := (phase[i] - want[i]).Signed(); d > 1<<20 || d < -1<<20 {
				t.Fatalf("message aliasing polynomial %d: coefficient %d has phase %v, want about %v", j, i, phase[i], want[i])
			}
		}
	}
}
