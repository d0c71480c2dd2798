package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// tfheLib128Shape is TFHELib128's shape (N = 1024, k = 1, l = 3, β = 7,
// t = 8, basebit = 2) with TLWE dimension n (630 for the set itself).
func tfheLib128Shape(n int) BootstrapShape {
	return BootstrapShape{LWEDim: n, LogN: 10, K: 1, BKLevels: 3, BKBaseLog: 7, BKOffset: refOffset(3, 7),
		KSLevels: 8, KSBaseLog: 2, KSOffset: refOffset(8, 2)}
}

func TestKSSamplesPerBlock(t *testing.T) {
	for _, c := range []struct{ count, sms, want int }{
		{1, 132, 1}, {65, 132, 1}, {66, 132, 1}, {132, 132, 2}, {263, 132, 2}, {264, 132, 4},
		{528, 132, 8}, {16384, 132, 8}, {3, 0, 4}, {1, 1, 2}, {4, 1, 8},
	} {
		if got := ksSamplesPerBlock(c.count, c.sms); got != c.want {
			t.Errorf("ksSamplesPerBlock(%d, %d) = %d, want %d", c.count, c.sms, got, c.want)
		}
		if got := ksSamplesPerBlock(c.count, c.sms); ksTY%got != 0 {
			t.Errorf("ksSamplesPerBlock(%d, %d) = %d does not divide %d", c.count, c.sms, got, ksTY)
		}
	}
}

func TestKSTile(t *testing.T) {
	for _, c := range []struct{ count, basebit, want int }{
		{1, 2, 0}, {7, 2, 0}, {8, 2, 16}, {32, 2, 16}, {33, 2, 0}, {63, 2, 0}, {64, 2, ksMMA}, {132, 2, ksMMA}, {16384, 2, ksMMA},
		{1, 3, 0}, {8, 3, 16}, {32, 3, 16}, {33, 3, 0}, {64, 3, ksMMA}, {16384, 3, ksMMA}, {16, 4, 0}, {16384, 4, 0}, {16384, 1, 0},
	} {
		if got := ksTile(c.count, 132, c.basebit); got != c.want {
			t.Errorf("ksTile(%d, 132, %d) = %d, want %d", c.count, c.basebit, got, c.want)
		}
	}
	for _, c := range []struct{ count, basebit, want int }{
		{1, 2, 0}, {7, 3, 0}, {8, 2, 16}, {32, 3, 16}, {33, 2, 0}, {64, 2, 0}, {1023, 2, 0}, {1024, 2, 16}, {16384, 3, 16}, {16, 1, 0}, {16384, 4, 0},
	} {
		if got := ksTileCUDA(c.count, 132, c.basebit); got != c.want {
			t.Errorf("ksTileCUDA(%d, 132, %d) = %d, want %d", c.count, c.basebit, got, c.want)
		}
	}
}

// TestKSMMATileMatchesSource: the Go side's tile of the tensor-core
// kernel (grid and block of KeySwitch) is bootstrap.cuh's KSM_WARPS and
// KSM_Q.
func TestKSMMATileMatchesSource(t *testing.T) {
	src, err := os.ReadFile("bootstrap.cuh")
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		want int
	}{{"KSM_WARPS", ksmWarps}, {"KSM_Q", ksmWords / 8}} {
		m := regexp.MustCompile(`(?m)^#define ` + c.name + ` (\d+)$`).FindSubmatch(src)
		if m == nil {
			t.Errorf("bootstrap.cuh has no #define %s", c.name)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got != c.want {
			t.Errorf("bootstrap.cuh: %s %d, the Go side %d", c.name, got, c.want)
		}
	}
	if ksmSamples != 16*ksmWarps {
		t.Errorf("ksmSamples %d, want 16 per warp", ksmSamples)
	}
}

func TestKSCoordsPerThread(t *testing.T) {
	for _, c := range []struct{ count, sms, want int }{
		{1, 132, 1}, {32, 132, 1}, {33, 132, ksCPT}, {16384, 132, ksCPT}, {1, 0, ksCPT}, {1, 8, 1}, {2, 8, ksCPT},
	} {
		if got := ksCoordsPerThread(c.count, c.sms); got != c.want {
			t.Errorf("ksCoordsPerThread(%d, %d) = %d, want %d", c.count, c.sms, got, c.want)
		}
	}
}

// TestKSChunks: the chunk policies, input coordinates split between the
// blocks of the grid's z. ksChunks (the untiled kernel): only while the
// grid falls short of 24 blocks per SM, into at most 32 chunks, each
// keeping at least four coordinates per class (TFHELib128: k·N = 1024, 20
// blocks for one sample, 330 for 66 to 264 samples). ksMMAChunks (the
// tensor-core kernel): while the grid falls short of two blocks per SM
// (20 word tiles, one sample tile per 128 samples), into about eight
// blocks per SM, at least 16 coordinate pairs per chunk, at most 32.
func TestKSChunks(t *testing.T) {
	type chunkCase struct{ blocks, kn, sms, want int }
	for _, p := range []struct {
		name  string
		f     func(blocks, kn, sms int) int
		cases []chunkCase
	}{
		{"ksChunks", ksChunks, []chunkCase{
			{20, 1024, 132, 32}, {330, 1024, 132, 9}, {640, 1024, 132, 4}, {3168, 1024, 132, 1}, {5000, 1024, 132, 1},
			{1, 1024, 132, 32}, {1, 64, 132, 2}, {1, 16, 132, 1}, {0, 1024, 132, 32}, {20, 1024, 0, 1},
			{20, 512, 132, 16}, {200, 1024, 132, 15},
		}},
		{"ksMMAChunks", ksMMAChunks, []chunkCase{
			{20, 1024, 132, 32}, {60, 1024, 132, 18}, {180, 1024, 132, 6}, {263, 1024, 132, 5}, {264, 1024, 132, 1},
			{2580, 1024, 132, 1}, {1, 1024, 132, 32}, {20, 64, 132, 2}, {20, 16, 132, 1}, {0, 1024, 132, 32},
			{20, 1024, 0, 1},
		}},
	} {
		for _, c := range p.cases {
			if got := p.f(c.blocks, c.kn, c.sms); got != c.want {
				t.Errorf("%s(%d, %d, %d) = %d, want %d", p.name, c.blocks, c.kn, c.sms, got, c.want)
			}
		}
	}
}

// TestKeySwitchBatches runs key switching at batch sizes that take every
// samples-per-block choice on the device (and counts that are not a
// multiple of it), with the untiled, the tiled and the tensor-core
// kernels, for basebit 2 (TFHELib128) and 3 (TFHErsDefault's t = 5 × 3),
// against refKeySwitch.
func TestKeySwitchBatches(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		c := l.Context()
		sms := c.Device().SMs
		rng := rand.New(rand.NewPCG(77, 78))
		b3 := tfheLib128Shape(11)
		b3.KSLevels, b3.KSBaseLog, b3.KSOffset = 5, 3, refOffset(5, 3)
		for _, sh := range []BootstrapShape{tfheLib128Shape(11), b3} {
			n, kn := sh.LWEDim, sh.ExtractedDim()
			table := randU32(rng, sh.KSTableLen())
			dtab := devUint32(t, c, table, len(table))
			for _, tile := range []int{0, ksTile16, ksMMA} {
				defer func(f func(int, int, int) int) { ksTileFor = f }(ksTileFor)
				ksTileFor = func(int, int, int) int { return tile }
				for _, count := range []int{1, sms/4 + 1, sms / 2, sms, sms + 1, 2*sms + 3, 4*sms + 5, 8*sms + 7} {
					if count < 1 {
						continue
					}
					t.Run(fmt.Sprintf("basebit=%d/tile=%d/count=%d/spb=%d/cpt=%d", sh.KSBaseLog, tile, count, ksSamplesPerBlock(count, sms), ksCoordsPerThread(count, sms)), func(t *testing.T) {
						in := randU32(rng, count*(kn+1))
						din := devUint32(t, c, in, len(in))
						dout := devUint32(t, c, nil, count*(n+1))
						require.NoError(t, bk.KeySwitch(nil, sh, dout, din, dtab, count))
						want := refKeySwitch(sh, in, table, count)
						compareWords(t, "KeySwitch", host32(t, dout), want)
						// Forced chunks (atomicAdd into a zeroed output) give the
						// same words at any batch size.
						defer func(f, g, h func(int, int, int) int) { ksChunksFor, ksTiledChunksFor, ksMMAChunksFor = f, g, h }(ksChunksFor, ksTiledChunksFor, ksMMAChunksFor)
						ksChunksFor = func(int, int, int) int { return 3 }
						ksTiledChunksFor, ksMMAChunksFor = ksChunksFor, ksChunksFor
						require.NoError(t, dout.Memset32(0x5A5A5A5A))
						require.NoError(t, bk.KeySwitch(nil, sh, dout, din, dtab, count))
						compareWords(t, "KeySwitch, 3 chunks", host32(t, dout), want)
					})
				}
			}
		}
	})
}

// BenchmarkKeySwitch times key switching alone on TFHELib128's shape
// (n = 630, kN = 1024, t = 8, basebit = 2; random table and inputs): per
// sample and samples/s, at batch sizes taking each samples-per-block
// choice; then TFHErsDefault's (basebit=3/…). GPU only.
func BenchmarkKeySwitch(b *testing.B) {
	l := gpuLibrary(b)
	bk, err := l.BootstrapKernels()
	require.NoError(b, err)
	c := l.Context()
	sh := tfheLib128Shape(630)
	rng := rand.New(rand.NewPCG(5, 6))
	const maxCount = 16384
	n, kn := sh.LWEDim, sh.ExtractedDim()
	dtab := devUint32(b, c, randU32(rng, sh.KSTableLen()), sh.KSTableLen())
	din := devUint32(b, c, randU32(rng, maxCount*(kn+1)), maxCount*(kn+1))
	dout := devUint32(b, c, nil, maxCount*(n+1))
	timeCall := func(b *testing.B, count int, call func() error) {
		require.NoError(b, call()) // warm-up
		require.NoError(b, c.Synchronize())
		b.ResetTimer()
		for range b.N {
			require.NoError(b, call())
		}
		require.NoError(b, c.Synchronize())
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*count), "µs/sample")
		b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "samples/s")
	}
	timeShape := func(b *testing.B, sh BootstrapShape, dout, din, dtab *DeviceBuffer[uint32], count int) {
		timeCall(b, count, func() error { return bk.KeySwitch(nil, sh, dout, din, dtab, count) })
	}
	run := func(b *testing.B, count int) { timeShape(b, sh, dout, din, dtab, count) }
	for _, count := range []int{1, 4, 8, 16, 32, 48, 66, 132, 264, 1024, maxCount} {
		b.Run(fmt.Sprintf("count=%d", count), func(b *testing.B) { run(b, count) })
	}
	// Each kernel at each batch size (the policy's choice is above):
	// untiled, tiles of 16, tensor cores.
	for _, k := range []struct {
		name string
		tile int
	}{{"untiled", 0}, {"tiled", ksTile16}, {"mma", ksMMA}} {
		for _, count := range []int{1, 16, 66, 132, 264, 1024, 4224, maxCount} {
			b.Run(fmt.Sprintf("%s/count=%d", k.name, count), func(b *testing.B) {
				defer func(f func(int, int, int) int) { ksTileFor = f }(ksTileFor)
				ksTileFor = func(int, int, int) int { return k.tile }
				run(b, count)
			})
		}
	}
	// The packed kernel (KeySwitchPacked) against the tensor-core kernel
	// it replaces, at the batch sizes the engine's passes take.
	if bk.HasKeySwitchPacked() {
		packed, err := PackKSTable(sh, host32(b, dtab))
		require.NoError(b, err)
		dpk := devUint32(b, c, packed, len(packed))
		for _, count := range []int{ksPackedMin, 132, 264, 1024, 4096, 4224, maxCount} {
			b.Run(fmt.Sprintf("packed/count=%d", count), func(b *testing.B) {
				timeCall(b, count, func() error { return bk.KeySwitchPacked(nil, sh, dout, din, dtab, dpk, count) })
			})
			b.Run(fmt.Sprintf("mma/count=%d", count), func(b *testing.B) {
				defer func(f func(int, int, int) int) { ksTileFor = f }(ksTileFor)
				ksTileFor = func(int, int, int) int { return ksMMA }
				run(b, count)
			})
		}
	}
	// Each kernel (0: untiled) at every batch size, for tuning ksTile.
	defer func(f func(int, int, int) int) { ksTileFor = f }(ksTileFor)
	for _, tile := range []int{0, 16} {
		ksTileFor = func(int, int, int) int { return tile }
		for _, count := range []int{1, 2, 4, 8, 16, 32, 48, 66, 132, 264, 1024, maxCount} {
			b.Run(fmt.Sprintf("tile=%d/count=%d", tile, count), func(b *testing.B) { run(b, count) })
		}
	}
	ksTileFor = ksTile
	// TFHErsDefault's key (n = 805, kN = 1536, t = 5, basebit 3): the
	// policy's choice, and each of the untiled, tiled and tensor-core
	// kernels, at the batch sizes the engine runs.
	{
		sh := tfheLib128Shape(805)
		sh.LogN, sh.K, sh.KSLevels, sh.KSBaseLog, sh.KSOffset = 9, 3, 5, 3, refOffset(5, 3)
		n, kn := sh.LWEDim, sh.ExtractedDim()
		dtab := devUint32(b, c, randU32(rng, sh.KSTableLen()), sh.KSTableLen())
		din := devUint32(b, c, randU32(rng, maxCount*(kn+1)), maxCount*(kn+1))
		dout := devUint32(b, c, nil, maxCount*(n+1))
		for _, k := range []struct {
			name string
			tile int
		}{{"policy", 1}, {"untiled", 0}, {"tiled", ksTile16}, {"mma", ksMMA}} {
			for _, count := range []int{1, 2, 4, 8, 16, 32, 48, 66, 132, 264, 1024, 4224, maxCount} {
				b.Run(fmt.Sprintf("basebit=3/%s/count=%d", k.name, count), func(b *testing.B) {
					defer func(f func(int, int, int) int) { ksTileFor = f }(ksTileFor)
					if k.tile != 1 {
						ksTileFor = func(int, int, int) int { return k.tile }
					}
					timeShape(b, sh, dout, din, dtab, count)
				})
			}
		}
	}
	// Other chunk choices (ksChunksFor) at the batch sizes of a circuit's
	// levels, for tuning ksChunks.
	defer func(f func(int, int, int) int) { ksChunksFor = f }(ksChunksFor)
	defer func(f func(int, int, int) int) { ksTiledChunksFor = f }(ksTiledChunksFor)
	for _, count := range []int{1, 16, 66, 132, 264} {
		// The tensor-core kernel's chunks (ksMMAChunksFor) at the same
		// sizes, for tuning ksMMAChunks and ksMMAMin.
		for _, z := range []int{1, 8, 16, 32} {
			b.Run(fmt.Sprintf("mma/count=%d/chunks=%d", count, z), func(b *testing.B) {
				defer func(f, g func(int, int, int) int) { ksTileFor, ksMMAChunksFor = f, g }(ksTileFor, ksMMAChunksFor)
				ksTileFor = func(int, int, int) int { return ksMMA }
				ksMMAChunksFor = func(int, int, int) int { return z }
				run(b, count)
			})
		}
		for _, z := range []int{1, 4, 8, 16, 32, 64} {
			ksChunksFor = func(int, int, int) int { return z }
			ksTiledChunksFor = ksChunksFor
			b.Run(fmt.Sprintf("count=%d/chunks=%d", count, z), func(b *testing.B) { run(b, count) })
		}
	}
}
