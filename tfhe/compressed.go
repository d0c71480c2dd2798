package tfhe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// CompressedCloudKey is a cloud key in the form a client sends to a server:
// every sample's body and one public seed from which the server regenerates
// every mask (Expand). TFHELib128's is about 15.5 MB where its CloudKey
// encodes in 72 MB (36 MB against 114 MB grouped by 3): of a TRGSW row it
// keeps one polynomial of k+1, of a key-switching sample one word of n+1.
//
// The masks are uniform in both forms; here they are the ChaCha8 streams
// of a seed derived one way (SHA-256) from the key generation's secret
// root, so the seed, which is public, tells nothing of that root, the
// noise or the secret key. This is the seeded-mask compression of
// TFHE-rs's compressed server keys and of Kyber's matrix seed: its
// security rests on the stream being indistinguishable from uniform, as
// every mask of this package already does. The bootstrapping key's
// messages are in its rows' bodies (a row of mask column c holds
// −m·g_i·s_c there rather than m·g_i in its mask, the same phase), so the
// expanded key is a different key from GenerateCloudKeyFromSeed's for the
// same seed, though an equivalent one.
//
// A CompressedCloudKey is immutable and safe for concurrent use; only
// UnmarshalBinary modifies one, and must not run beside other use of it.
type CompressedCloudKey struct {
	params   Params
	grouping int
	maskSeed [torus.SeedSize]byte
	bk       []torus.Torus32 // each TRGSW row's body: [sample][row][coefficient]
	ksk      []torus.Torus32 // each key-switching sample's body: [i][level][magnitude]
}

// GenerateCompressedCloudKey returns a fresh compressed cloud key for sk
// from crypto/rand; the options are GenerateCloudKey's (WithGrouping).
func GenerateCompressedCloudKey(sk *SecretKey, opts ...CloudKeyOption) (*CompressedCloudKey, error) {
	return GenerateCompressedCloudKeyFromSeed(sk, cryptoSeed(), opts...)
}

// GenerateCompressedCloudKeyFromSeed returns the compressed cloud key of sk
// determined by seed, for tests and reproducible experiments. The seed is
// as secret as sk (GenerateCloudKeyFromSeed says why); the key's own mask
// seed, which it derives from seed and carries, is public. Its masks and
// noise are unrelated to those of GenerateCloudKeyFromSeed's key for the
// same sk and seed (another root), so both keys may be published. Generation
// takes as long as GenerateCloudKeyFromSeed's and a little more memory: it
// makes the whole key, then copies out the bodies.
func GenerateCompressedCloudKeyFromSeed(sk *SecretKey, seed [torus.SeedSize]byte, opts ...CloudKeyOption) (*CompressedCloudKey, error) {
	ck, maskSeed, err := generateCloudKey(sk, seed, true, opts)
	if err != nil {
		return nil, err
	}
	p := ck.params
	k, l, N := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	c := &CompressedCloudKey{params: p, grouping: ck.bk.grouping, maskSeed: maskSeed}
	c.bk = make([]torus.Torus32, 0, len(ck.bk.rows)*(k+1)*l*N)
	for i := range ck.bk.rows {
		for _, row := range ck.bk.rows[i].Rows {
			c.bk = append(c.bk, row.Value[k]...)
		}
	}
	w := p.LWEDimension() + 1
	c.ksk = make([]torus.Torus32, len(ck.ksk.data)/w)
	for j := range c.ksk {
		c.ksk[j] = ck.ksk.data[j*w+w-1]
	}
	return c, nil
}

// Params returns the key's parameter set; the zero Params for a nil key.
func (c *CompressedCloudKey) Params() Params {
	if c == nil {
		return Params{}
	}
	return c.params
}

// Grouping returns the bootstrapping key's grouping factor (WithGrouping);
// 0 for a nil or zero key.
func (c *CompressedCloudKey) Grouping() int {
	if c == nil {
		return 0
	}
	return c.grouping
}

// compressedLens returns the number of bootstrapping-key and key-switching
// body words of a compressed key of p grouped by g.
func compressedLens(p Params, g int) (bk, ks int) {
	k, l, N := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	return bkSamples(p.LWEDimension(), g) * (k + 1) * l * N, ksTableLen(p) / (p.LWEDimension() + 1)
}

// Validate reports whether c is complete and consistent: non-nil, made for
// a valid parameter set and grouping, with bodies of the right lengths.
func (c *CompressedCloudKey) Validate() error {
	if c == nil {
		return errors.New("tfhe: nil compressed cloud key")
	}
	if err := c.params.check(); err != nil {
		return fmt.Errorf("tfhe: compressed cloud key: %w", err)
	}
	if err := checkGrouping(c.params, c.grouping); err != nil {
		return err
	}
	if bk, ks := compressedLens(c.params, c.grouping); len(c.bk) != bk || len(c.ksk) != ks {
		return errors.New("tfhe: compressed cloud key is incomplete")
	}
	return nil
}

// Expand returns the cloud key c stands for, its masks regenerated from
// the seed: what a server calls once on receiving c. It spreads the work
// over all cores (GOMAXPROCS) and needs no secret.
//
// The expanded key is larger than c by factors its parameters set, which
// c's sender chose: k+1 for the bootstrapping key (a TRGSW row keeps one
// polynomial of k+1), n+1 for the key-switching table (a sample keeps one
// word of n+1). That is 4.7 times for TFHELib128, but up to about 340
// times for a valid set made to inflate it (k = 8, N = 256, n = 8192,
// t = 3, basebit = 8: 79 MB received, 26 GB to allocate and fill; 9 MB
// for 2 GB with n = 630). A server that takes keys from parties it does
// not trust checks Params and Grouping against the sets it serves before
// it calls Expand.
func (c *CompressedCloudKey) Expand() (*CloudKey, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, g := c.params, c.grouping
	k, N := p.GLWEDimension(), p.PolyDegree()
	masks := torus.NewSamplerFromSeed(c.maskSeed)
	bk := newBootstrappingKey(p, g)
	label := labelBK
	if g > 1 {
		label = labelBKGroup
	}
	rowsPer := len(bk.rows[0].Rows)
	parallelFor(len(bk.rows), func() struct{} { return struct{}{} }, func(_ struct{}, i int) {
		smp := masks.Derive(label, uint64(i))
		for r, row := range bk.rows[i].Rows {
			for j := 0; j < k; j++ { // encryptTRLWEZero's draws, in its order
				smp.UniformSlice(row.Value[j])
			}
			o := (i*rowsPer + r) * N
			copy(row.Value[k], c.bk[o:o+N])
		}
	})
	ksk := &KeySwitchingKey{params: p, data: make([]torus.Torus32, ksTableLen(p))}
	n := p.LWEDimension()
	per := p.KSLevels() * (1 << p.KSBaseLog() / 2) // samples of one coordinate
	parallelFor(p.ExtractedLWEDimension(), func() struct{} { return struct{}{} }, func(_ struct{}, i int) {
		smp := masks.Derive(labelKSK, uint64(i))
		for j := i * per; j < (i+1)*per; j++ { // encryptTLWE's draws, in the generator's order
			s := ksk.data[j*(n+1) : (j+1)*(n+1)]
			smp.UniformSlice(s[:n])
			s[n] = c.ksk[j]
		}
	})
	ck := &CloudKey{params: p, bk: bk, ksk: ksk}
	if err := ck.Validate(); err != nil {
		return nil, errors.Join(errors.New("tfhe: internal error: expanded cloud key is invalid"), err)
	}
	return ck, nil
}

// MarshalBinary encodes the compressed key: header (kind CompressedCloudKey,
// version 1), parameters, grouping factor (uint16), the 32-byte mask seed,
// the bootstrapping key's bodies ([sample][row][coefficient]) and the
// key-switching samples' bodies ([i][level][magnitude]).
func (c *CompressedCloudKey) MarshalBinary() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	b := appendParams(appendHeader(nil, kindCompressedCloudKey), c.params)
	b = binary.LittleEndian.AppendUint16(b, uint16(c.grouping))
	b = append(b, c.maskSeed[:]...)
	b = append(make([]byte, 0, len(b)+4*(len(c.bk)+len(c.ksk))), b...)
	b = appendTorus(b, c.bk)
	return appendTorus(b, c.ksk), nil
}

// UnmarshalBinary decodes a compressed cloud key (MarshalBinary's format).
func (c *CompressedCloudKey) UnmarshalBinary(data []byte) error {
	if c == nil {
		return errors.New("tfhe: CompressedCloudKey.UnmarshalBinary: nil receiver")
	}
	d, err := unmarshalCompressed(data)
	if err != nil {
		return err
	}
	*c = *d
	return nil
}

func unmarshalCompressed(data []byte) (*CompressedCloudKey, error) {
	r := reader{b: data}
	r.header(kindCompressedCloudKey)
	p := r.params()
	g := int(r.u16("grouping"))
	seed := r.take(torus.SeedSize, "mask seed")
	if r.err != nil {
		return nil, r.err
	}
	if err := checkGrouping(p, g); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	bkLen, ksLen := compressedLens(p, g)
	if !r.need(4*(bkLen+ksLen), "compressed cloud key") {
		return nil, r.err
	}
	d := &CompressedCloudKey{params: p, grouping: g, bk: make([]torus.Torus32, bkLen), ksk: make([]torus.Torus32, ksLen)}
	copy(d.maskSeed[:], seed)
	r.torusSlice(d.bk, "bootstrapping key bodies")
	r.torusSlice(d.ksk, "key-switching bodies")
	if err := r.done(); err != nil {
		return nil, err
	}
	return d, nil
}

// isCompressedCloudKey reports whether data starts with the header of a
// compressed cloud key (of any version: the decoder says what is wrong).
func isCompressedCloudKey(data []byte) bool {
	return len(data) >= headerSize && string(data[:4]) == marshalMagic &&
		objectKind(binary.LittleEndian.Uint16(data[6:])) == kindCompressedCloudKey
}
