package bootstrap

import (
	"fmt"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// toyParams is a small, insecure set for fast structural tests.
var toyParams = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "toy", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
})

type keyPair struct {
	sk *tfhe.SecretKey
	ck *tfhe.CloudKey
}

func seedOf(label string, i int) [torus.SeedSize]byte {
	return torus.DeriveSeed([torus.SeedSize]byte{}, "bootstrap-test/"+label, uint64(i))
}

// genKeys returns key pair i of p; grouping > 1 makes a grouped
// bootstrapping key (tfhe.WithGrouping) for the same secret key.
func genKeys(p tfhe.Params, i, grouping int) keyPair {
	sk, err := tfhe.GenerateSecretKeyFromSeed(p, seedOf(p.Name()+"/sk", i))
	if err != nil {
		panic(err)
	}
	label := p.Name() + "/ck"
	if grouping > 1 {
		label += "/grouped"
	}
	ck, err := tfhe.GenerateCloudKeyFromSeed(sk, seedOf(label, i), tfhe.WithGrouping(max(grouping, 1)))
	if err != nil {
		panic(err)
	}
	return keyPair{sk, ck}
}

// keyCache builds each key pair once per test binary (TFHELib128 key
// generation is heavy).
var keyCache = func() func(p tfhe.Params, i, grouping int) keyPair {
	var mu sync.Mutex
	m := map[string]func() keyPair{}
	return func(p tfhe.Params, i, grouping int) keyPair {
		mu.Lock()
		key := fmt.Sprintf("%s#%d/g%d", p.Name(), i, grouping)
		f, ok := m[key]
		if !ok {
			f = sync.OnceValue(func() keyPair { return genKeys(p, i, grouping) })
			m[key] = f
		}
		mu.Unlock()
		return f()
	}
}()

// testKeys returns key pair i of p with a plain bootstrapping key.
func testKeys(p tfhe.Params, i int) keyPair { return keyCache(p, i, 1) }

// testGroupedKeys returns key pair i of p with a grouping-2 bootstrapping
// key (the secret key of testKeys(p, i)).
func testGroupedKeys(p tfhe.Params, i int) keyPair { return keyCache(p, i, 2) }

func newCPU(t testing.TB, ck *tfhe.CloudKey, opts CPUOptions) *CPU {
	t.Helper()
	e, err := NewCPU(ck, opts)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

func newEncryptor(t testing.TB, sk *tfhe.SecretKey, i int) *tfhe.Encryptor {
	e, err := tfhe.NewEncryptorFromSeed(sk, seedOf("enc", i))
	require.NoError(t, err)
	return e
}

// heavySets returns the sets a test may afford: all named sets normally,
// only the toy set under -race -short (bootstrapping is ~10× slower there).
func heavySets(t testing.TB) []tfhe.Params {
	if raceEnabled && testing.Short() {
		t.Log("-race -short: named parameter sets skipped, toy set only")
		return []tfhe.Params{toyParams}
	}
	return append(tfhe.ParamSets(), toyParams)
}

func newTLWEs(count, dim int) []*tfhe.TLWE {
	s := make([]*tfhe.TLWE, count)
	for i := range s {
		s[i] = tfhe.NewTLWE(dim)
	}
	return s
}

// nandInputs returns count NAND combinations (0, 1/8) − c1 − c2 of fresh
// encryptions and the expected results.
func nandInputs(t testing.TB, p tfhe.Params, enc *tfhe.Encryptor, count int) ([]*tfhe.TLWE, []bool) {
	in := newTLWEs(count, p.LWEDimension())
	want := make([]bool, count)
	for i := range in {
		x, y := i&1 == 1, i&2 == 2
		in[i].SetTrivial(torus.Encode(1, 8))
		tfhe.SubTLWETo(in[i], in[i], enc.EncryptBool(x))
		tfhe.SubTLWETo(in[i], in[i], enc.EncryptBool(y))
		want[i] = !(x && y)
	}
	return in, want
}
