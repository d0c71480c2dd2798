package gates

import (
	"errors"
	"fmt"

	"github.com/goldfhe/goldfhe/tfhe"
)

// EncryptBits returns a fresh encryption of each bit (tfhe.EncodeBool) under
// enc's TLWE key.
func EncryptBits(enc *tfhe.Encryptor, bits []bool) ([]*tfhe.TLWE, error) {
	if err := checkEncryptor("EncryptBits", enc); err != nil {
		return nil, err
	}
	cts := make([]*tfhe.TLWE, len(bits))
	for j, b := range bits {
		cts[j] = enc.EncryptBool(b)
	}
	return cts, nil
}

// EncryptUint encrypts the low width bits of v little-endian: cts[j]
// encrypts bit j (the LSBFirst order of Uint64Bits). width must be in
// [0, 64] and v must fit in it.
func EncryptUint(enc *tfhe.Encryptor, v uint64, width int) ([]*tfhe.TLWE, error) {
	if width < 0 || width > 64 {
		return nil, fmt.Errorf("gates: EncryptUint: width %d outside [0, 64]", width)
	}
	if err := checkEncryptor("EncryptUint", enc); err != nil {
		return nil, err
	}
	if width < 64 && v>>width != 0 {
		// Nothing of the value (not even its length): it is the secret
		// being encrypted, and errors end up in logs (as HexBits').
		return nil, fmt.Errorf("gates: EncryptUint: the value does not fit in %d bits", width)
	}
	return EncryptBits(enc, Uint64Bits(v, width))
}

// checkEncryptor reports a nil Encryptor or a zero one (not made by
// tfhe.NewEncryptor), whose methods would panic on its missing key.
func checkEncryptor(name string, enc *tfhe.Encryptor) error {
	if enc == nil {
		return fmt.Errorf("gates: %s: nil Encryptor", name)
	}
	if enc.Params().IsZero() {
		return fmt.Errorf("gates: %s: Encryptor not initialized (use tfhe.NewEncryptor)", name)
	}
	return nil
}

// DecryptBits decrypts each sample with sk. Samples must have the TLWE
// dimension n of sk's parameter set.
func DecryptBits(sk *tfhe.SecretKey, cts []*tfhe.TLWE) ([]bool, error) {
	if sk == nil {
		return nil, errors.New("gates: DecryptBits: nil SecretKey")
	}
	if sk.Params().IsZero() {
		// A zero key (not made by tfhe.GenerateSecretKey or decoded) has
		// no bits: every sample would be refused as of "dimension 0",
		// and a sample of dimension 0 decrypted to its body.
		return nil, errors.New("gates: DecryptBits: SecretKey not initialized (use tfhe.GenerateSecretKey)")
	}
	n := sk.Params().LWEDimension()
	bits := make([]bool, len(cts))
	for j, c := range cts {
		if err := checkSample(c, n); err != nil {
			return nil, fmt.Errorf("gates: DecryptBits: sample %d %v", j, err)
		}
		bits[j] = sk.DecryptBool(c)
	}
	return bits, nil
}

// DecryptUint decrypts at most 64 little-endian bits (cts[j] is bit j).
func DecryptUint(sk *tfhe.SecretKey, cts []*tfhe.TLWE) (uint64, error) {
	if len(cts) > 64 {
		return 0, fmt.Errorf("gates: DecryptUint: %d bits do not fit in a uint64", len(cts))
	}
	bits, err := DecryptBits(sk, cts)
	if err != nil {
		return 0, err
	}
	return BitsUint64(bits), nil
}
