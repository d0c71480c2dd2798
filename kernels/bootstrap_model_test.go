package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

// TestWriteBlindRotateVectors writes, when GOLDFHE_MODEL_VECTORS names a
// directory, one vector file per wide, cluster or split kernel and n in
// {5, 6} ({7, 8, 9} for G = 3: every size of last group): random samples,
// key and the kernel's tables, and what refWide computes from them, for
// testdata/blindrotate_model.cpp, which runs the kernels' CUDA source on
// the host (its comment has the commands and the format). For a Pre split
// kernel the key words are the pass's K' (refCombine: what the combine
// kernel writes), the output is still refWide's from the key, and the key
// itself follows the output (its length, then its words): the model runs
// the combine kernel on it beside the split kernel, as the GPU does, and
// checks the K' it writes.
func TestWriteBlindRotateVectors(t *testing.T) {
	dir := os.Getenv("GOLDFHE_MODEL_VECTORS")
	if dir == "" {
		t.Skip("set GOLDFHE_MODEL_VECTORS=dir to write the vectors of testdata/blindrotate_model.cpp")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	rng := rand.New(rand.NewPCG(41, 42))
	for _, ws := range WideShapes() {
		ns := []int{5, 6}
		if ws.G == 3 {
			ns = []int{7, 8, 9}
		}
		for _, n := range ns {
			sh := fusedTestShape(FusedShape{K: ws.K, L: ws.L, F1: ws.n(), F2: 1}, n)
			sh.Grouping = ws.G
			plan, err := smallntt.NewPlan(sh.N(), smallntt.Hybrid, ws.F1, ws.F2, ws.F3)
			require.NoError(t, err)
			tables := wideTables(plan, ws.grouped())
			key := randomWords(rng, sh.BKLen(), true)
			const count = 3
			in := randU32(rng, count*(n+1))
			in[0], in[2] = 0, 1
			// As in TestBlindRotateWide: a skipped group, amounts
			// summing to 2N, amounts 0.
			groupedInputs(ws.G, sh, in)
			mus := []uint32{rng.Uint32()}
			if ws.Flat {
				// A gate's μ (1/8, 1/4), as the engine passes (its first
				// step has one nonzero digit row), beside a random one.
				mus = append(mus, 1<<29, 1<<30)
			}
			for mi, mu := range mus {
				key := key // each vector's own: paired or replaced below
				want := refWide(ws, sh, plan, in, key, mu, count)
				var raw []uint64
				if ws.Pre {
					// A Pre vector's key is K' (refCombine); the step's key
					// follows its outputs, for the combine kernel, which the
					// model runs beside the split kernel and checks against K'.
					raw, key = key, refCombine(sh, plan, in, key, count)
				}
				if ws.PairedKey() {
					key, err = PairKey(sh, key) // the kernel's layout; want is from the key as drawn
					require.NoError(t, err)
				}
				var buf []byte
				u32 := func(v ...uint32) {
					for _, x := range v {
						buf = binary.LittleEndian.AppendUint32(buf, x)
					}
				}
				cluster := uint32(0) // the kind: 0 wide, 1 cluster, 2 split, 3 Pre split (T: its compute threads), 4 flat
				switch {
				case ws.Flat:
					cluster = 4
				case ws.Cluster:
					cluster = 1
				case ws.Pre:
					cluster = 3
				case ws.Split != 0:
					cluster = 2
				}
				u32(uint32(ws.F1), uint32(ws.F2), uint32(ws.F3), uint32(ws.K), uint32(ws.L), uint32(ws.T), cluster, uint32(ws.G),
					uint32(n), uint32(sh.BKBaseLog), sh.BKOffset, mu, count, uint32(ws.SharedBytes()),
					uint32(len(tables)), uint32(len(key)), uint32(len(in)), uint32(len(want)))
				for _, x := range slices.Concat(tables, key) {
					buf = binary.LittleEndian.AppendUint64(buf, x)
				}
				u32(in...)
				u32(want...)
				if ws.Pre {
					u32(uint32(len(raw)))
					for _, x := range raw {
						buf = binary.LittleEndian.AppendUint64(buf, x)
					}
				}
				name := fmt.Sprintf("%s_n%d.bin", ws.kernelName(), n)
				if mi > 0 {
					name = fmt.Sprintf("%s_n%d_mu%08x.bin", ws.kernelName(), n, mu)
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf, 0o644))
			}
		}
	}
}
