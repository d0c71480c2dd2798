package tfhe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

func TestMarshalRoundTrip(t *testing.T) {
	p := toyParams
	kp := testKeys(p)
	enc := newEncryptor(t, kp.sk, 40)

	// Params.
	for _, q := range allSets() {
		b, err := q.MarshalBinary()
		require.NoError(t, err)
		var q2 Params
		if err := q2.UnmarshalBinary(b); err != nil || !q2.Equal(q) {
			t.Fatalf("%s: Params round trip: %v", q.Name(), err)
		}
	}
	// TLWE.
	ct := enc.EncryptBool(true)
	b, err := ct.MarshalBinary()
	require.NoError(t, err)
	var ct2 TLWE
	if err := ct2.UnmarshalBinary(b); err != nil || !kp.sk.DecryptBool(&ct2) || ct2.Dim() != ct.Dim() {
		t.Fatalf("TLWE round trip: %v", err)
	}
	// TRLWE.
	mu := torus.NewPoly(p.PolyDegree())
	mu[3] = 1 << 29
	tr := enc.EncryptTRLWE(mu)
	b, err = tr.MarshalBinary()
	require.NoError(t, err)
	var tr2 TRLWE
	if err := tr2.UnmarshalBinary(b); err != nil || !equalTRLWE(tr, &tr2) {
		t.Fatalf("TRLWE round trip: %v", err)
	}
	// Secret key.
	b, err = kp.sk.MarshalBinary()
	require.NoError(t, err)
	var sk2 SecretKey
	require.NoError(t, sk2.UnmarshalBinary(b))
	if !sk2.DecryptBool(ct) || !sk2.params.Equal(p) {
		t.Fatal("decoded secret key decrypts wrong")
	}
	if ph := sk2.PhaseTRLWE(tr); torus.Decode(ph[3], 8) != 1 {
		t.Fatal("decoded secret key: TRLWE phase wrong")
	}
	// Cloud key: bootstraps with the decoded key are bit-identical.
	b, err = kp.ck.MarshalBinary()
	require.NoError(t, err)
	var ck2 CloudKey
	require.NoError(t, ck2.UnmarshalBinary(b))
	if digestCloudKey(&ck2) != digestCloudKey(kp.ck) {
		t.Fatal("decoded cloud key differs")
	}
	b2, _ := ck2.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("cloud key encoding is not canonical")
	}
}

// TestNilReceivers: decoding valid data into a nil pointer is an error, not
// a panic (it used to panic once the data had been checked), and a nil key
// has the zero Params, as its Grouping is 0.
func TestNilReceivers(t *testing.T) {
	kp := testKeys(toyParams)
	enc := newEncryptor(t, kp.sk, 41)
	valid := func(m interface{ MarshalBinary() ([]byte, error) }) []byte {
		b, err := m.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	for _, c := range []struct {
		name string
		u    interface{ UnmarshalBinary([]byte) error }
		data []byte
	}{
		{"Params", (*Params)(nil), valid(toyParams)},
		{"TLWE", (*TLWE)(nil), valid(enc.EncryptBool(true))},
		{"TRLWE", (*TRLWE)(nil), valid(enc.EncryptTRLWE(torus.NewPoly(toyParams.PolyDegree())))},
		{"SecretKey", (*SecretKey)(nil), valid(kp.sk)},
		{"CloudKey", (*CloudKey)(nil), valid(kp.ck)},
	} {
		if err := c.u.UnmarshalBinary(c.data); err == nil || !strings.Contains(err.Error(), "nil receiver") {
			t.Errorf("%s: UnmarshalBinary into nil: %v, want a nil-receiver error", c.name, err)
		}
	}
	if p := (*SecretKey)(nil).Params(); !p.IsZero() {
		t.Errorf("nil SecretKey: Params %v, want the zero Params", p.Name())
	}
	if p := (*CloudKey)(nil).Params(); !p.IsZero() {
		t.Errorf("nil CloudKey: Params %v, want the zero Params", p.Name())
	}
	// The parts of a nil or zero CloudKey: nil, with zero accessors.
	for name, ck := range map[string]*CloudKey{"nil": nil, "zero": {}} {
		bk, ksk := ck.BootstrappingKey(), ck.KeySwitchingKey()
		if bk != nil || ksk != nil || bk.Len() != 0 || bk.Grouping() != 0 || !bk.Params().IsZero() || !ksk.Params().IsZero() {
			t.Errorf("%s CloudKey: parts %v, %v", name, bk, ksk)
		}
	}
}

// TestNilCloudKeyOption: a nil option sets nothing.
func TestNilCloudKeyOption(t *testing.T) {
	kp := testKeys(toyParams)
	ck, err := GenerateCloudKeyFromSeed(kp.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/nil-option", 0), nil, WithGrouping(2), nil)
	if err != nil || ck.Grouping() != 2 {
		t.Fatalf("GenerateCloudKeyFromSeed with nil options: grouping %d, %v", ck.Grouping(), err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	kp := testKeys(toyParams)
	ckb, _ := kp.ck.MarshalBinary()
	skb, _ := kp.sk.MarshalBinary()
	ctb, _ := NewTLWE(5).MarshalBinary()
	corrupt := func(b []byte, i int, v byte) []byte {
		c := bytes.Clone(b)
		c[i] = v
		return c
	}
	cases := []struct {
		name string
		data []byte
		dec  interface{ UnmarshalBinary([]byte) error }
	}{
		{"empty", nil, new(TLWE)},
		{"bad magic", corrupt(ctb, 0, 'X'), new(TLWE)},
		{"bad version", corrupt(ctb, 4, 9), new(TLWE)},
		{"wrong kind", ctb, new(TRLWE)},
		{"truncated TLWE", ctb[:len(ctb)-1], new(TLWE)},
		{"trailing TLWE", append(bytes.Clone(ctb), 0), new(TLWE)},
		{"huge TLWE", corrupt(corrupt(ctb, 11, 0x7f), 10, 0xff), new(TLWE)},
		{"truncated cloud key", ckb[:len(ckb)-3], new(CloudKey)},
		{"cloud key as secret key", ckb, new(SecretKey)},
		{"secret key bit 2", corrupt(skb, len(skb)-1, 2), new(SecretKey)},
		{"truncated secret key", skb[:len(skb)-1], new(SecretKey)},
		{"invalid params", corrupt(skb, headerSize+2+len(toyParams.Name())+4, 0xff), new(SecretKey)},
		// N = 3 with k = 1: the right length for the shape, which no
		// ring X^N + 1 of a parameter set has.
		{"TRLWE N not a power of two", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(
			appendHeader(nil, kindTRLWE), 1), 3), new(TRLWE)},
	}
	cases[len(cases)-1].data = append(cases[len(cases)-1].data, make([]byte, 4*2*3)...)
	for _, c := range cases {
		if err := c.dec.UnmarshalBinary(c.data); err == nil {
			t.Errorf("%s: decoded without error", c.name)
		} else if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v does not wrap ErrFormat", c.name, err)
		}
	}
	// The version error names every version the kind takes.
	if err := new(CloudKey).UnmarshalBinary(corrupt(ckb, 4, 3)); err == nil || !strings.Contains(err.Error(), "want 1, or 2 for a grouped key") {
		t.Errorf("cloud key of version 3: %v", err)
	}
	// A grouped cloud key (version 2) given for a secret key is named as
	// the wrong object, not as an unknown version.
	gck, err := GenerateCloudKeyFromSeed(kp.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/kind-first", 0), WithGrouping(2))
	require.NoError(t, err)
	gckb, _ := gck.MarshalBinary()
	if err := new(SecretKey).UnmarshalBinary(gckb); err == nil || !strings.Contains(err.Error(), "not a SecretKey") {
		t.Errorf("grouped cloud key as a secret key: %v", err)
	}
	if _, err := (&SecretKey{}).MarshalBinary(); err == nil {
		t.Error("marshalling an empty secret key succeeded")
	}
	if _, err := NewTRLWE(1, 3).MarshalBinary(); err == nil {
		t.Error("marshalling a TRLWE of N = 3 succeeded: UnmarshalBinary refuses it")
	}
	if _, err := (&CloudKey{}).MarshalBinary(); err == nil {
		t.Error("marshalling an empty cloud key succeeded")
	}
	// Nil receivers: errors, not panics.
	for name, m := range map[string]interface{ MarshalBinary() ([]byte, error) }{
		"TLWE": (*TLWE)(nil), "TRLWE": (*TRLWE)(nil), "SecretKey": (*SecretKey)(nil), "CloudKey": (*CloudKey)(nil),
		"empty TLWE": &TLWE{}, "empty TRLWE": &TRLWE{},
	} {
		if _, err := m.MarshalBinary(); err == nil {
			t.Errorf("marshalling a nil or empty %s succeeded", name)
		}
	}
}

// FuzzUnmarshal feeds arbitrary bytes to every decoder: no panic, what
// decodes re-encodes to the same bytes, and a decoded compressed cloud key
// expands.
func FuzzUnmarshal(f *testing.F) {
	kp := testKeys(toyParams)
	skb, _ := kp.sk.MarshalBinary()
	pb, _ := toyParams.MarshalBinary()
	ctb, _ := NewTLWE(3).MarshalBinary()
	trb, _ := NewTRLWE(1, 2).MarshalBinary()
	// The start of a grouped cloud key: version 2, parameters, grouping 2.
	grouped := append(appendParams(appendHeaderVersion(nil, kindCloudKey, marshalVersionGrouped), toyParams), 2, 0)
	// Sizes of 2^32−1, −1 as an int on a 32-bit platform (make test-386).
	tlweMax := binary.LittleEndian.AppendUint32(appendHeader(nil, kindTLWE), math.MaxUint32)
	trlweMax := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(appendHeader(nil, kindTRLWE), math.MaxUint32), 2)
	// Gadget shapes whose product wraps a 32-bit int (they once reached a
	// negative shift or a 2^31-bit big.Int there).
	wrapBK, wrapKS := toyParams.lit, toyParams.lit
	wrapBK.BKLevels, wrapBK.BKBaseLog = 2, math.MaxInt32
	wrapKS.KSLevels, wrapKS.KSBaseLog = 1<<30+1, 4
	pbWrapBK := appendParams(appendHeader(nil, kindParams), Params{lit: wrapBK})
	pbWrapKS := appendParams(appendHeader(nil, kindParams), Params{lit: wrapKS})
	// The start of a compressed cloud key: parameters, grouping 1, its seed.
	compressed := append(append(appendParams(appendHeader(nil, kindCompressedCloudKey), toyParams), 1, 0), make([]byte, torus.SeedSize)...)
	// A whole compressed key of the smallest set (3 KB), so that the
	// checks of a decoded one (it re-encodes, it expands) run on the seeds
	// too: from the start above alone, the fuzzer would have to grow a
	// toy key's 393 KB of bodies to the byte.
	tiny := MustNewParams(ParamsLiteral{Name: "fuzz-tiny", LWEDimension: 1, PolyDegree: 256, GLWEDimension: 1,
		BKLevels: 1, BKBaseLog: 1, KSLevels: 1, KSBaseLog: 1, LWEStdDev: 0x1p-20, BKStdDev: 0x1p-20})
	tinyBK, tinyKS := compressedLens(tiny, 1)
	compressedTiny := append(append(appendParams(appendHeader(nil, kindCompressedCloudKey), tiny), 1, 0), make([]byte, torus.SeedSize+4*(tinyBK+tinyKS))...)
	for _, s := range [][]byte{skb, pb, ctb, trb, grouped, compressed, compressedTiny, {}, []byte("GFHE\x01\x00\x05\x00"), tlweMax, trlweMax, pbWrapBK, pbWrapKS} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Params
		if p.UnmarshalBinary(data) == nil {
			if b, err := p.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("Params re-encoding differs: %v", err)
			}
		}
		var ct TLWE
		if ct.UnmarshalBinary(data) == nil {
			if b, err := ct.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("TLWE re-encoding differs: %v", err)
			}
		}
		var tr TRLWE
		if tr.UnmarshalBinary(data) == nil {
			if b, err := tr.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("TRLWE re-encoding differs: %v", err)
			}
		}
		var sk SecretKey
		if sk.UnmarshalBinary(data) == nil {
			if b, err := sk.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("SecretKey re-encoding differs: %v", err)
			}
		}
		var ck CloudKey
		if ck.UnmarshalBinary(data) == nil {
			if isCompressedCloudKey(data) {
				t.Fatal("CloudKey.UnmarshalBinary took a compressed key")
			}
			if b, err := ck.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("CloudKey re-encoding differs: %v", err)
			}
		}
		var cck CompressedCloudKey
		if cck.UnmarshalBinary(data) == nil {
			if b, err := cck.MarshalBinary(); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("CompressedCloudKey re-encoding differs: %v", err)
			}
			if _, err := cck.Expand(); err != nil {
				t.Fatalf("Expand of a decoded key: %v", err)
			}
		}
	})
}

// TestUnmarshalIntoKeyInUse: decoding another set's key into a secret key
// an Encryptor was made from leaves the Encryptor on the key and set it was
// made with (it used to index the new key's slices with the old sizes).
func TestUnmarshalIntoKeyInUse(t *testing.T) {
	old := testKeys(toyParams).sk
	sk := new(SecretKey)
	data, err := old.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, sk.UnmarshalBinary(data))
	enc, err := NewEncryptorFromSeed(sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/unmarshal-in-use", 0))
	require.NoError(t, err)
	other, err := testKeys(CuFHE80).sk.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, sk.UnmarshalBinary(other))
	if !sk.Params().Equal(CuFHE80) || !enc.Params().Equal(toyParams) {
		t.Fatalf("after decoding CuFHE80 into the key: key %v, Encryptor %v", sk.Params().Name(), enc.Params().Name())
	}
	checkTRLWEPhases(t, old, enc, "under the key the Encryptor was made with")
	for _, b := range []bool{false, true} {
		if got := old.DecryptBool(enc.EncryptBool(b)); got != b {
			t.Errorf("EncryptBool(%v) decrypts to %v under the original key", b, got)
		}
	}
}

// TestUnmarshalLeavesCopies: a copy of a SecretKey value made before
// UnmarshalBinary on the original keeps the original key, its TRLWE
// transform included. The transform is computed on first use, and its func
// used to be bound to the original, so the copy's first TRLWE phase was
// taken under the newly decoded key.
func TestUnmarshalLeavesCopies(t *testing.T) {
	orig := testKeys(toyParams).sk
	data, err := orig.MarshalBinary()
	require.NoError(t, err)
	sk := new(SecretKey)
	require.NoError(t, sk.UnmarshalBinary(data))
	cp := *sk // before any use of the transform
	other, err := GenerateSecretKeyFromSeed(toyParams, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/other-key", 0))
	require.NoError(t, err)
	od, err := other.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, sk.UnmarshalBinary(od))
	enc, err := NewEncryptorFromSeed(orig, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/copies", 0))
	require.NoError(t, err)
	checkTRLWEPhases(t, &cp, enc, "under the copy, made before another key was decoded into the original")
}

// checkTRLWEPhases encrypts a TRLWE message with enc and checks its phase
// under key, coefficient by coefficient.
func checkTRLWEPhases(t *testing.T, key *SecretKey, enc *Encryptor, under string) {
	t.Helper()
	mu := make(torus.Poly, enc.Params().PolyDegree())
	for i := range mu {
		mu[i] = torus.Torus32(i%2) << 30
	}
	phase := key.PhaseTRLWE(enc.EncryptTRLWE(mu))
	for i := range mu {
		if d := (phase[i] - mu[i]).Signed(); d > 1<<20 || d < -1<<20 {
			t.Fatalf("coefficient %d: phase %v, want about %v %s", i, phase[i], mu[i], under)
		}
	}
}
