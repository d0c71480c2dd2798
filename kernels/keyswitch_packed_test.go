package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// unpackKSTable is PackKSTable's inverse: every byte of the table is in
// the packed form once (ksPackWalk). The hand-placed word of
// TestPackKSTable and the host model's own packing
// (testdata/keyswitch_model.cpp) check the walk itself.
func unpackKSTable(sh BootstrapShape, packed []uint32) []uint32 {
	table := make([]uint32, sh.KSTableLen())
	ksPackWalk(sh, func(src, dst, b, e int) { table[src] |= (packed[dst] >> (8 * e) & 0xFF) << (8 * b) })
	return table
}

// TestPackKSTable: the packed table holds every table word once (its
// inverse gives the table back) and zeros past t, k·N and n; one word's
// bytes land where the kernel's lane reads them; shapes without a packed
// form and short tables are refused.
func TestPackKSTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sh := range []BootstrapShape{
		tfheLib128Shape(11),
		{LWEDim: 40, LogN: 3, K: 1, BKLevels: 1, BKBaseLog: 1, KSLevels: 5, KSBaseLog: 2}, // t < 8, kn = 16
		{LWEDim: 7, LogN: 2, K: 3, BKLevels: 1, BKBaseLog: 1, KSLevels: 8, KSBaseLog: 2},  // kn = 12, n + 1 = 8
		{LWEDim: 70, LogN: 2, K: 1, BKLevels: 1, BKBaseLog: 1, KSLevels: 1, KSBaseLog: 2}, // t = 1
	} {
		table := randU32(rng, sh.KSTableLen())
		packed, err := PackKSTable(sh, table)
		require.NoError(t, err)
		if len(packed) != sh.KSPackedLen() {
			t.Fatalf("%+v: %d words, want %d", sh, len(packed), sh.KSPackedLen())
		}
		if got := unpackKSTable(sh, packed); !slices.Equal(got, table) {
			t.Errorf("%+v: unpacked table differs", sh)
		}
		// Zero bytes: a table of all ones packs to 0xFF bytes exactly where
		// a level ≤ t, coordinate < kN and word ≤ n is, so the count of
		// nonzero bytes is 4 bytes × 2 rows × every (i, j, m).
		ones := make([]uint32, len(table))
		for i := range ones {
			ones[i] = 0xFFFFFFFF
		}
		p1, _ := PackKSTable(sh, ones)
		nonzero := 0
		for _, v := range p1 {
			for b := range 4 {
				if v>>(8*b)&0xFF != 0 {
					nonzero++
				}
			}
		}
		if want := 4 * len(table); nonzero != want {
			t.Errorf("%+v: %d nonzero bytes, want %d", sh, nonzero, want)
		}
	}
	// One word by hand: TFHELib128's shape, coordinate i = 3 (k-step 1,
	// q / 2 = 1), level j = 6 (q % 2 = 1, e = 1), row 2, word m = 9
	// (octet 1, g = 1): lane (1, 3), b1 of byte b in half b / 2, byte e = 1.
	sh := tfheLib128Shape(11)
	w := sh.LWEDim + 1
	table := make([]uint32, sh.KSTableLen())
	table[((3*8+5)*2+1)*w+9] = 0x44332211
	packed, err := PackKSTable(sh, table)
	require.NoError(t, err)
	octets, lane := (sh.LWEDim+8)/8, 4*1+3
	for b := range 4 {
		at := (((1*octets+1)*2+b/2)*32+lane)*4 + 2*(b%2) + 1
		if want := uint32(0x11*(b+1)) << 8; packed[at] != want {
			t.Errorf("byte %d: packed[%d] = %#x, want %#x", b, at, packed[at], want)
		}
		packed[at] = 0
	}
	if slices.ContainsFunc(packed, func(v uint32) bool { return v != 0 }) {
		t.Error("the word's bytes landed elsewhere too")
	}
	for name, c := range map[string]struct {
		sh  BootstrapShape
		len int
	}{
		"basebit 3": {func() BootstrapShape { s := tfheLib128Shape(11); s.KSBaseLog, s.KSLevels = 3, 5; return s }(), 0},
		"t = 9":     {func() BootstrapShape { s := tfheLib128Shape(11); s.KSLevels = 9; return s }(), 0},
		"short":     {tfheLib128Shape(11), tfheLib128Shape(11).KSTableLen() - 1},
		"bad shape": {BootstrapShape{}, 0},
	} {
		if c.len == 0 {
			c.len = c.sh.KSTableLen()
		}
		if _, err := PackKSTable(c.sh, make([]uint32, max(c.len, 0))); err == nil || !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("%s: %v, want a kernels error", name, err)
		}
	}
}

func TestKSPackedChunks(t *testing.T) {
	for _, c := range []struct{ blocks, steps, sms, want int }{
		{264, 512, 132, 1}, {640, 512, 132, 1}, {263, 512, 132, 2}, {60, 512, 132, 5}, {20, 512, 132, 14},
		{1, 512, 132, 32}, {20, 8, 132, 1}, {20, 48, 132, 3}, {0, 512, 132, 32},
	} {
		if got := ksPackedChunks(c.blocks, c.steps, c.sms); got != c.want {
			t.Errorf("ksPackedChunks(%d, %d, %d) = %d, want %d", c.blocks, c.steps, c.sms, got, c.want)
		}
	}
}

// TestKeySwitchPacked: the packed kernel against the plain sum, at batch
// sizes around its block's 128 samples and past ksPackedMin, in one chunk
// and in forced chunks (atomicAdd into a zeroed output), on TFHELib128's
// shape and one with t < 8 and an odd k·N; below ksPackedMin and for
// basebit 3 it runs KeySwitch; a misaligned packed table is refused. On
// the GPU when there is one, else on the fake driver (which checks the
// launch and computes the plain sum).
func TestKeySwitchPacked(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		if !bk.HasKeySwitchPacked() {
			t.Skip("the fatbin has no goldfhe_bs_keyswitch_packed_b2: rebuild it (make fatbin)")
		}
		c := l.Context()
		rng := rand.New(rand.NewPCG(9, 10))
		odd := BootstrapShape{LWEDim: 45, LogN: 4, K: 3, BKLevels: 1, BKBaseLog: 1, KSLevels: 5, KSBaseLog: 2, KSOffset: refOffset(5, 2)}
		b3 := tfheLib128Shape(11)
		b3.KSLevels, b3.KSBaseLog, b3.KSOffset = 5, 3, refOffset(5, 3)
		// TFHELib128 itself on the GPU; on the fake, whose plain sums run
		// on the CPU, n = 67 (three blocks of octets, the last partial).
		lib := tfheLib128Shape(630)
		if strings.HasSuffix(t.Name(), "/fake") {
			lib = tfheLib128Shape(67)
		}
		for _, sh := range []BootstrapShape{lib, odd, b3} {
			n, kn := sh.LWEDim, sh.ExtractedDim()
			table := randU32(rng, sh.KSTableLen())
			dtab := devUint32(t, c, table, len(table))
			var dpk *DeviceBuffer[uint32]
			if sh.KSPackable() {
				packed, err := PackKSTable(sh, table)
				require.NoError(t, err)
				dpk = devUint32(t, c, append(packed, 0, 0, 0, 0), len(packed)+4) // room for a misaligned view
			} else {
				dpk = devUint32(t, c, nil, 4)
			}
			for _, count := range []int{1, ksPackedMin - 1, ksPackedMin, kspSamples + 1, 300, 1000} {
				t.Run(fmt.Sprintf("n=%d/kn=%d/t=%d/basebit=%d/count=%d", n, kn, sh.KSLevels, sh.KSBaseLog, count), func(t *testing.T) {
					in := randU32(rng, count*(kn+1))
					for i := 0; i < len(in); i += 7 {
						in[i] = 0x55555555 - sh.KSOffset // every raw digit 1
					}
					din := devUint32(t, c, in, len(in))
					dout := devUint32(t, c, nil, count*(n+1))
					want := refKeySwitch(sh, in, table, count)
					require.NoError(t, bk.KeySwitchPacked(nil, sh, dout, din, dtab, dpk, count))
					compareWords(t, "KeySwitchPacked", host32(t, dout), want)
					defer func(f func(int, int, int) int) { ksPackedChunksFor = f }(ksPackedChunksFor)
					ksPackedChunksFor = func(int, int, int) int { return 3 }
					require.NoError(t, dout.Memset32(0x5A5A5A5A))
					require.NoError(t, bk.KeySwitchPacked(nil, sh, dout, din, dtab, dpk, count))
					compareWords(t, "KeySwitchPacked, 3 chunks", host32(t, dout), want)
					// Without a packed table: KeySwitch on the plain one.
					require.NoError(t, dout.Memset32(0x5A5A5A5A))
					require.NoError(t, bk.KeySwitchPacked(nil, sh, dout, din, dtab, nil, count))
					compareWords(t, "KeySwitchPacked, no packed table", host32(t, dout), want)
				})
			}
			if sh.KSPackable() {
				const count = 2 * ksPackedMin
				din := devUint32(t, c, nil, count*(kn+1))
				dout := devUint32(t, c, nil, count*(n+1))
				err := bk.KeySwitchPacked(nil, sh, dout, din, dtab, dpk.View(1, 1+sh.KSPackedLen()), count)
				if err == nil || !strings.Contains(err.Error(), "16-byte") {
					t.Errorf("misaligned packed table: %v", err)
				}
				if err := bk.KeySwitchPacked(nil, sh, dout, din, dtab, dpk.View(0, sh.KSPackedLen()-1), count); err == nil {
					t.Error("short packed table: no error")
				}
			}
		}
	})
}
