package tfhe

import (
	"errors"
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// ErrKeyMismatch is wrapped by SecretKey.CheckCloudKey's error when the
// cloud key was made from another secret key.
var ErrKeyMismatch = errors.New("tfhe: the cloud key was not made from this secret key")

// checkKSKSamples and checkBKRows are how many key-switching samples and
// bootstrapping-key TRGSWs CheckCloudKey decrypts. A cloud key of another
// secret key passes one KSK check with probability 2^−(basebit+1) and one
// BK check with 2^−(β+1) (its phases are then uniform), so together below
// 2^−(3·64 + 8·16) for every named set.
const (
	checkKSKSamples = 64
	checkBKRows     = 16
)

// CheckCloudKey reports whether ck was made from sk (GenerateCloudKey):
// nil when it was, an error wrapping ErrKeyMismatch when its keys decrypt
// under sk to other messages than they must, or another error for a cloud
// key that is invalid or of another parameter set. It decrypts a fixed
// selection of ck's key-switching samples (level 1: m·s'_i/base) and of its
// bootstrapping TRGSWs (the first body row: its bit or group message, times
// 1/Bg), spread over the whole key, against a tolerance of a quarter of a
// message step, so that a key pair from two different key generations is
// told apart before any evaluation, whose outputs would decrypt to noise.
// It is cheap: about 0.7 ms for TFHELib128 (a 2-vCPU Xeon).
//
// It is for catching mistakes with keys you hold, not for checking a key
// someone else may have changed: its answer is a decryption under sk of
// samples the cloud key supplies, so whoever can alter a cloud key and
// learn whether it passed (an error message, a refusal to go on) learns
// about one bit of sk each time, and all of it in about n+1 tries. Check a
// cloud key only from your own key generation or storage you trust, and
// never check a key received from a server or a peer this way (compare its
// bytes or a digest with what you sent).
func (sk *SecretKey) CheckCloudKey(ck *CloudKey) error {
	if err := sk.check(); err != nil {
		return err
	}
	if err := ck.Validate(); err != nil {
		return err
	}
	p := sk.params
	if !ck.params.Equal(p) {
		c, s := DistinctNames(ck.params, p)
		return fmt.Errorf("tfhe: the cloud key is for %s, the secret key for %s", c, s)
	}
	// One comparison: d ∈ [−tol, tol] mod 2^32, for tol < 2^31 (the
	// tolerances below are at most 2^29). Two (d ≤ tol || −d ≤ tol) would
	// branch on the sign of the key's noise.
	near := func(got, want torus.Torus32, tol uint32) bool {
		return uint32(got-want)+tol <= 2*tol
	}

	basebit := p.KSBaseLog()
	half := 1 << basebit / 2
	kn := p.ExtractedLWEDimension()
	for c := range checkKSKSamples {
		i := int(uint64(c) * uint64(kn) / checkKSKSamples) // spread over the coordinates
		m := 1 + c%half
		want := torus.Torus32(m) * torus.Torus32(sk.ext[i]) << (32 - basebit)
		if got := sk.PhaseTLWE(ck.ksk.Sample(i, 1, m)); !near(got, want, 1<<(32-basebit-2)) {
			return fmt.Errorf("%w (key-switching sample %d, 1, %d)", ErrKeyMismatch, i, m)
		}
	}

	k, l := p.GLWEDimension(), p.BKLevels()
	factor := p.BKGadget().Factor(1)
	terms := groupTerms(p.LWEDimension(), ck.Grouping())
	rows := len(terms)
	for c := range min(checkBKRows, rows) {
		idx := int(uint64(c) * uint64(rows) / uint64(min(checkBKRows, rows)))
		t := terms[idx]
		m := groupMessage(sk.lwe[t.first:t.first+t.r], t.u)
		got := sk.PhaseTRLWE(&ck.bk.rows[idx].Rows[k*l])[0]
		if !near(got, torus.Torus32(m)*factor, uint32(factor)/4) {
			return fmt.Errorf("%w (bootstrapping key sample %d)", ErrKeyMismatch, idx)
		}
	}
	return nil
}
