package smallntt

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// accumulate runs, for every size, a seeded chain of transforms through the
// default plan and a Matrix plan: forward, pointwise product-accumulate,
// inverse, fed back as the next input; every output goes into one SHA-256.
// Variants and factorisations share one layout, so the digest depends only
// on the mathematics (DESIGN.md §3: every NTT variant gives identical bits);
// a GPU run of the same chain must reproduce it.
// With baseline set, every plan is the Butterfly one instead: the digest must
// not change.
func accumulate(t testing.TB, rounds int, baseline bool) string {
	h := sha256.New()
	var buf [8]byte
	put := func(v []uint64) {
		for _, x := range v {
			binary.LittleEndian.PutUint64(buf[:], x)
			h.Write(buf[:])
		}
	}
	for _, n := range Sizes {
		rng := rand.New(rand.NewChaCha8([32]byte{byte(n >> 8), 'g', 'o', 'l', 'd'}))
		def, err := DefaultPlan(n)
		require.NoError(t, err)
		fs := factorisations(n)
		mat, err := NewPlan(n, Matrix, fs[len(fs)/2]...)
		require.NoError(t, err)
		if baseline {
			def, _ = NewPlan(n, Butterfly)
			mat = def
		}
		x := make(Poly, n)
		k := make(NTTPoly, n)
		for i := range x {
			x[i], k[i] = rng.Uint64(), rng.Uint64N(P)
		}
		acc := make(NTTPoly, n)
		y := make(NTTPoly, n)
		for r := 0; r < rounds; r++ {
			p := def
			if r%4 == 3 {
				p = mat
			}
			p.Forward(y, x)
			put(y)
			p.MulAdd(acc, y, k)
			put(acc)
			p.Inverse(x, acc)
			put(x)
			p.ForwardCyclic(y, x)
			put(y)
			p.InverseCyclic(x, y)
			x[r%n] ^= rng.Uint64() // keep the chain moving
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestAccumulated(t *testing.T) {
	rounds, want := 200, "2f3664a757505c1463431cd023592d3c4e6cafeb5a5490b9046363685917c025"
	if testing.Short() {
		rounds, want = 20, "b5bf75e3f8a9aaf7bb9a25db664a5cf92ff812fae3bf6f0377ffc285ee02653d"
	}
	got := accumulate(t, rounds, false)
	if got != want {
		t.Errorf("digest of %d rounds = %s, want %s", rounds, got, want)
	}
	if base := accumulate(t, rounds, true); base != got {
		t.Errorf("butterfly-only digest %s differs from %s", base, got)
	}
}
