package tfhe

import (
	"fmt"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// toyParams is a small, insecure set for fast structural tests.
var toyParams = MustNewParams(ParamsLiteral{
	Name: "toy", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
})

type keyPair struct {
	sk *SecretKey
	ck *CloudKey
}

func seedOf(label string, i int) [torus.SeedSize]byte {
	return torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/"+label, uint64(i))
}

// keyCache builds the keys of each set and grouping once per test binary
// (key generation for TFHELib128 takes a while); both groupings share the
// secret key.
var keyCache = func() func(p Params, grouping int) keyPair {
	var mu sync.Mutex
	m := map[string]func() keyPair{}
	return func(p Params, grouping int) keyPair {
		mu.Lock()
		key := fmt.Sprintf("%s/g%d", p.Name(), grouping)
		f, ok := m[key]
		if !ok {
			f = sync.OnceValue(func() keyPair {
				sk, err := GenerateSecretKeyFromSeed(p, seedOf(p.Name()+"/sk", 0))
				if err != nil {
					panic(err)
				}
				label := p.Name() + "/ck"
				if grouping > 1 {
					label += fmt.Sprintf("-g%d", grouping)
				}
				ck, err := GenerateCloudKeyFromSeed(sk, seedOf(label, 0), WithGrouping(grouping))
				if err != nil {
					panic(err)
				}
				return keyPair{sk, ck}
			})
			m[key] = f
		}
		mu.Unlock()
		return f()
	}
}()

// testKeys returns p's keys with a plain bootstrapping key.
func testKeys(p Params) keyPair { return keyCache(p, 1) }

// testGroupedKeys returns p's keys with a grouping-2 bootstrapping key.
func testGroupedKeys(p Params) keyPair { return keyCache(p, 2) }

func butterfly(t testing.TB, n int) *smallntt.Plan {
	p, err := smallntt.NewPlan(n, smallntt.Butterfly)
	require.NoError(t, err)
	return p
}

func newEvaluator(t testing.TB, p Params, withKeys bool) *Evaluator {
	var ck *CloudKey
	if withKeys {
		ck = testKeys(p).ck
	}
	e, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), ck)
	require.NoError(t, err)
	return e
}

func newEncryptor(t testing.TB, sk *SecretKey, i int) *Encryptor {
	e, err := NewEncryptorFromSeed(sk, seedOf("enc", i))
	require.NoError(t, err)
	return e
}

// allSets are the named sets plus the toy set.
func allSets() []Params { return append(ParamSets(), toyParams) }

// heavySets returns the sets a test may afford: all sets normally, only the
// toy set under -race -short (key generation and bootstrapping are ~10×
// slower there).
func heavySets(t testing.TB) []Params {
	if raceEnabled && testing.Short() {
		t.Log("-race -short: named parameter sets skipped, toy set only")
		return []Params{toyParams}
	}
	return allSets()
}
