package tfhe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/goldfhe/goldfhe/torus"
)

// Binary encoding. Every object starts with a header: the magic "GFHE", a
// format version (uint16: 1, or 2 for a cloud key with a grouped
// bootstrapping key, which carries its grouping factor) and the object
// kind (uint16). All
// integers are little-endian; Torus32 values are uint32. Objects tied to a
// parameter set embed it (as its literal) and are checked against it:
// decoders return errors — never panic — on truncated, oversized,
// inconsistent or trailing data, and never allocate more than the input's
// size justifies. (CompressedCloudKey.Expand, which is not a decoder,
// does: its doc says how much.)

const (
	marshalMagic   = "GFHE"
	marshalVersion = 1
	// marshalVersionGrouped is the version of a cloud key whose
	// bootstrapping key is grouped: a uint16 grouping factor follows the
	// parameters. Plain cloud keys keep version 1, byte for byte.
	marshalVersionGrouped = 2
	headerSize            = 8
)

type objectKind uint16

const (
	kindParams objectKind = iota + 1
	kindTLWE
	kindTRLWE
	kindSecretKey
	kindCloudKey
	kindCompressedCloudKey
)

func (k objectKind) String() string {
	switch k {
	case kindParams:
		return "Params"
	case kindTLWE:
		return "TLWE"
	case kindTRLWE:
		return "TRLWE"
	case kindSecretKey:
		return "SecretKey"
	case kindCloudKey:
		return "CloudKey"
	case kindCompressedCloudKey:
		return "CompressedCloudKey"
	}
	return fmt.Sprintf("kind %d", uint16(k))
}

// ErrFormat is wrapped by every decoding error.
var ErrFormat = errors.New("tfhe: malformed encoding")

func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, a...))
}

func appendHeader(b []byte, k objectKind) []byte { return appendHeaderVersion(b, k, marshalVersion) }

func appendHeaderVersion(b []byte, k objectKind, version uint16) []byte {
	b = append(b, marshalMagic...)
	b = binary.LittleEndian.AppendUint16(b, version)
	return binary.LittleEndian.AppendUint16(b, uint16(k))
}

// reader consumes an encoding; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = formatErr(format, a...)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("truncated %s (need %d bytes, have %d)", what, n, len(r.b))
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) u16(what string) uint16 {
	if s := r.take(2, what); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if s := r.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if s := r.take(8, what); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// header reads a header of kind want and returns its version: 1, or 2 for
// a grouped cloud key.
func (r *reader) header(want objectKind) uint16 {
	h := r.take(headerSize, "header")
	if h == nil {
		return 0
	}
	if string(h[:4]) != marshalMagic {
		r.fail("bad magic %q", h[:4])
		return 0
	}
	// The kind first: a grouped cloud key (version 2) given where a
	// secret key is wanted is the wrong file, not a version to upgrade.
	if k := objectKind(binary.LittleEndian.Uint16(h[6:])); k != want {
		r.fail("object is a %v, not a %v", k, want)
		return 0
	}
	v := binary.LittleEndian.Uint16(h[4:])
	if v != marshalVersion && (v != marshalVersionGrouped || want != kindCloudKey) {
		if want == kindCloudKey {
			r.fail("unsupported version %d for a %v (want %d, or %d for a grouped key)", v, want, marshalVersion, marshalVersionGrouped)
		} else {
			r.fail("unsupported version %d for a %v (want %d)", v, want, marshalVersion)
		}
		return 0
	}
	return v
}

// torusSlice reads count Torus32 values into dst (len(dst) = count).
func (r *reader) torusSlice(dst []torus.Torus32, what string) {
	s := r.take(4*len(dst), what)
	if s == nil {
		return
	}
	for i := range dst {
		dst[i] = torus.Torus32(binary.LittleEndian.Uint32(s[4*i:]))
	}
}

// need fails unless at least n more bytes remain: the guard before any
// allocation sized by the input.
func (r *reader) need(n int, what string) bool {
	if r.err == nil && (n < 0 || n > len(r.b)) {
		r.fail("truncated %s (need %d bytes, have %d)", what, n, len(r.b))
	}
	return r.err == nil
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return r.err
}

func appendTorus(b []byte, v []torus.Torus32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

const maxStringLen = 1 << 10

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func (r *reader) str(what string) string {
	n := int(r.u16(what + " length"))
	if n > maxStringLen {
		r.fail("%s of %d bytes", what, n)
		return ""
	}
	return string(r.take(n, what))
}

// appendParams encodes p's literal (no header).
func appendParams(b []byte, p Params) []byte {
	l := p.lit
	b = appendString(b, l.Name)
	for _, x := range []int{l.LWEDimension, l.PolyDegree, l.GLWEDimension, l.BKLevels, l.BKBaseLog,
		l.KSLevels, l.KSBaseLog, l.SecurityBits} {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.LWEStdDev))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.BKStdDev))
	return appendString(b, l.Note)
}

func (r *reader) params() Params {
	var l ParamsLiteral
	l.Name = r.str("parameter name")
	for _, x := range []*int{&l.LWEDimension, &l.PolyDegree, &l.GLWEDimension, &l.BKLevels, &l.BKBaseLog,
		&l.KSLevels, &l.KSBaseLog, &l.SecurityBits} {
		*x = int(int32(r.u32("parameter")))
	}
	l.LWEStdDev = math.Float64frombits(r.u64("σ_lwe"))
	l.BKStdDev = math.Float64frombits(r.u64("σ_bk"))
	l.Note = r.str("parameter note")
	if r.err != nil {
		return Params{}
	}
	p, err := NewParams(l)
	if err != nil {
		r.fail("%v", err)
		return Params{}
	}
	return p
}

// MarshalBinary encodes p (its literal; decoding validates it again).
func (p Params) MarshalBinary() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return appendParams(appendHeader(nil, kindParams), p), nil
}

// UnmarshalBinary decodes and validates a parameter set.
func (p *Params) UnmarshalBinary(data []byte) error {
	if p == nil {
		return errors.New("tfhe: Params.UnmarshalBinary: nil receiver")
	}
	r := reader{b: data}
	r.header(kindParams)
	q := r.params()
	if err := r.done(); err != nil {
		return err
	}
	*p = q
	return nil
}

// maxTLWEDimension bounds decoded TLWE samples: n or k·N of any valid set.
const maxTLWEDimension = maxGLWEDimension * 4096

// MarshalBinary encodes c: header, dimension n (uint32), then a_0 … a_{n−1}, b.
func (c *TLWE) MarshalBinary() ([]byte, error) {
	if c == nil || len(c.Value) == 0 {
		return nil, errors.New("tfhe: TLWE.MarshalBinary: nil or empty sample")
	}
	if c.Dim() > maxTLWEDimension {
		return nil, fmt.Errorf("tfhe: TLWE.MarshalBinary: dimension %d above %d, which UnmarshalBinary refuses", c.Dim(), maxTLWEDimension)
	}
	b := appendHeader(make([]byte, 0, headerSize+4+4*len(c.Value)), kindTLWE)
	b = binary.LittleEndian.AppendUint32(b, uint32(c.Dim()))
	return appendTorus(b, c.Value), nil
}

// UnmarshalBinary decodes a TLWE sample (any dimension up to k·N of the
// largest supported set); callers check the dimension they expect.
func (c *TLWE) UnmarshalBinary(data []byte) error {
	if c == nil {
		return errors.New("tfhe: TLWE.UnmarshalBinary: nil receiver")
	}
	r := reader{b: data}
	r.header(kindTLWE)
	// Compared as read: as an int, 2^32−1 is −1 on a 32-bit platform.
	d := r.u32("dimension")
	if r.err == nil && d > maxTLWEDimension {
		r.fail("TLWE dimension %d above %d", d, maxTLWEDimension)
	}
	n := int(d)
	if !r.need(4*(n+1), "TLWE") {
		return r.err
	}
	v := make([]torus.Torus32, n+1)
	r.torusSlice(v, "TLWE")
	if err := r.done(); err != nil {
		return err
	}
	c.Value = v
	return nil
}

// MarshalBinary encodes c: header, k and N (uint32), then the k+1
// polynomials.
func (c *TRLWE) MarshalBinary() ([]byte, error) {
	if c == nil {
		return nil, errors.New("tfhe: TRLWE.MarshalBinary: nil sample")
	}
	k, n := c.K(), c.N()
	if k < 1 || !c.wellFormed(k, n) || n == 0 {
		return nil, errors.New("tfhe: TRLWE.MarshalBinary: malformed sample")
	}
	if k > maxGLWEDimension || n > 4096 || n&(n-1) != 0 {
		return nil, fmt.Errorf("tfhe: TRLWE.MarshalBinary: shape k=%d, N=%d beyond what UnmarshalBinary takes (k ≤ %d, N a power of two ≤ 4096)", k, n, maxGLWEDimension)
	}
	b := appendHeader(make([]byte, 0, headerSize+8+4*(k+1)*n), kindTRLWE)
	b = binary.LittleEndian.AppendUint32(b, uint32(k))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for _, p := range c.Value {
		b = appendTorus(b, p)
	}
	return b, nil
}

// UnmarshalBinary decodes a TRLWE sample.
func (c *TRLWE) UnmarshalBinary(data []byte) error {
	if c == nil {
		return errors.New("tfhe: TRLWE.UnmarshalBinary: nil receiver")
	}
	r := reader{b: data}
	r.header(kindTRLWE)
	k32, n32 := r.u32("k"), r.u32("N") // compared as read, as for TLWE
	// N a power of two, as every parameter set's (NewParams): X^N + 1
	// is the ring's modulus only then.
	if r.err == nil && (k32 < 1 || k32 > maxGLWEDimension || n32 < 1 || n32 > 4096 || n32&(n32-1) != 0) {
		r.fail("TRLWE shape k=%d, N=%d out of range", k32, n32)
	}
	k, n := int(k32), int(n32)
	if !r.need(4*(k+1)*n, "TRLWE") {
		return r.err
	}
	d := NewTRLWE(k, n)
	for _, p := range d.Value {
		r.torusSlice(p, "TRLWE")
	}
	if err := r.done(); err != nil {
		return err
	}
	*c = *d
	return nil
}

// MarshalBinary encodes the secret key: header, parameters, then the n TLWE
// key bits and the k·N TRLWE key bits, one byte each. Keep it secret.
func (sk *SecretKey) MarshalBinary() ([]byte, error) {
	if err := sk.check(); err != nil {
		return nil, err
	}
	b := appendParams(appendHeader(nil, kindSecretKey), sk.params)
	for _, s := range sk.lwe {
		b = append(b, byte(s))
	}
	for _, s := range sk.ext {
		b = append(b, byte(s))
	}
	return b, nil
}

// UnmarshalBinary decodes a secret key into sk, replacing what sk held;
// every key coefficient must be 0 or 1. It must not run beside other use
// of sk. Encryptors made from sk before keep the key they were made with.
func (sk *SecretKey) UnmarshalBinary(data []byte) error {
	if sk == nil {
		return errors.New("tfhe: SecretKey.UnmarshalBinary: nil receiver")
	}
	r := reader{b: data}
	r.header(kindSecretKey)
	p := r.params()
	if r.err != nil {
		return r.err
	}
	bitsLen := p.LWEDimension() + p.ExtractedLWEDimension()
	s := r.take(bitsLen, "key bits")
	if err := r.done(); err != nil {
		return err
	}
	d := newSecretKey(p)
	for i, x := range s {
		if x > 1 {
			return formatErr("key coefficient %d is %d, not 0 or 1", i, x)
		}
		if i < len(d.lwe) {
			d.lwe[i] = int32(x)
		} else {
			d.ext[i-len(d.lwe)] = int32(x)
		}
	}
	// A new keyBits, never writes into the old one, which Encryptors'
	// copies of sk and copies of the SecretKey value may still hold.
	sk.params, sk.keyBits = d.params, d.keyBits
	sk.ntt = lazyNTT(sk.trlwe)
	return nil
}

// MarshalBinary encodes the cloud key: header, parameters, for a grouped
// key (version 2) its grouping factor as a uint16, the bootstrapping key
// (coefficient form, [i][row][column][coefficient]) and the key-switching
// table ([i][level][magnitude][coordinate]). TFHELib128's is about 72 MB
// (88 MB grouped by 2, 114 MB by 3: the key-switching table's 41 MB and
// 49,152 bytes a TRGSW, 630, 945 or 1,470 of them).
func (ck *CloudKey) MarshalBinary() ([]byte, error) {
	if err := ck.Validate(); err != nil {
		return nil, err
	}
	var b []byte
	if g := ck.bk.grouping; g > 1 {
		b = appendParams(appendHeaderVersion(nil, kindCloudKey, marshalVersionGrouped), ck.params)
		b = binary.LittleEndian.AppendUint16(b, uint16(g))
	} else {
		b = appendParams(appendHeader(nil, kindCloudKey), ck.params)
	}
	b = append(make([]byte, 0, len(b)+4*(len(ck.bk.data)+len(ck.ksk.data))), b...)
	b = appendTorus(b, ck.bk.data)
	return appendTorus(b, ck.ksk.data), nil
}

// UnmarshalBinary decodes a cloud key (MarshalBinary's encoding). A
// compressed cloud key's encoding is refused with an error that says so:
// decode it into a CompressedCloudKey, check its Params and Grouping, and
// Expand it (CompressedCloudKey.Expand says why the check comes first).
func (ck *CloudKey) UnmarshalBinary(data []byte) error {
	if ck == nil {
		return errors.New("tfhe: CloudKey.UnmarshalBinary: nil receiver")
	}
	if isCompressedCloudKey(data) {
		return formatErr("a compressed cloud key, not a CloudKey: decode it with CompressedCloudKey.UnmarshalBinary, check its Params, then Expand")
	}
	r := reader{b: data}
	version := r.header(kindCloudKey)
	p := r.params()
	g := 1
	if version == marshalVersionGrouped {
		g = int(r.u16("grouping"))
		if r.err == nil && g < 2 {
			// MarshalBinary writes a plain key as version 1: one encoding
			// per key.
			r.fail("a grouped cloud key (version 2) of grouping %d", g)
		}
	}
	if r.err != nil {
		return r.err
	}
	if err := checkGrouping(p, g); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	bkLen := bkSamples(p.LWEDimension(), g) * (p.GLWEDimension() + 1) * p.BKLevels() * (p.GLWEDimension() + 1) * p.PolyDegree()
	ksLen := ksTableLen(p)
	if !r.need(4*(bkLen+ksLen), "cloud key") {
		return r.err
	}
	bk := newBootstrappingKey(p, g)
	r.torusSlice(bk.data, "bootstrapping key")
	ksk := &KeySwitchingKey{params: p, data: make([]torus.Torus32, ksLen)}
	r.torusSlice(ksk.data, "key-switching key")
	if err := r.done(); err != nil {
		return err
	}
	d := &CloudKey{params: p, bk: bk, ksk: ksk}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	*ck = *d
	return nil
}
