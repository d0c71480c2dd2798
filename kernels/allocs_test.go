package kernels

import (
	"sync/atomic"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

// TestLaunchAllocs: a bootstrapping kernel's launch method allocates
// nothing of its own (prepare takes its operands as values), only what
// its driver calls do: one allocation a call, the argument slice that
// purego.SyscallN (or here the fake driver) takes, as the package doc
// says. On a fake GPU whose goldfhe_bs_* launches do nothing, each method
// makes at most as many heap allocations as driver calls. So do the
// asynchronous copies between views that the engine makes on every pass.
func TestLaunchAllocs(t *testing.T) {
	var calls atomic.Int64
	_, l := newBootstrapFakeWith(t, true, &calls)
	c := l.Context()
	bk, err := l.BootstrapKernels()
	require.NoError(t, err)

	const count = 64 // past ksPackedMin: the packed key switching runs
	sh := tfheLib128Shape(630)
	n, kn, N := sh.LWEDim, sh.ExtractedDim(), sh.N()
	in := devUint32(t, c, nil, count*(n+1))
	abar := devUint32(t, c, nil, count*n)
	acc := devUint32(t, c, nil, count*(sh.K+1)*N)
	dec := devUint64(t, c, nil, count*sh.Rows()*N)
	prod := devUint64(t, c, nil, count*(sh.K+1)*N)
	ext := devUint32(t, c, nil, count*(kn+1))
	out := devUint32(t, c, nil, count*(n+1))
	table := devUint32(t, c, nil, sh.KSTableLen())
	packed := devUint32(t, c, nil, sh.KSPackedLen())
	bkey := devUint64(t, c, nil, sh.BKLen())
	gsh := sh
	gsh.Grouping = 3
	gkey := devUint64(t, c, nil, gsh.BKLen())
	plan, err := smallntt.NewPlan(N, smallntt.Hybrid, 8, 8, 16)
	require.NoError(t, err)
	gtables := devUint64(t, c, wideTables(plan, true), len(wideTables(plan, true)))
	fplan, err := smallntt.NewPlan(N, smallntt.Hybrid, 32, 32)
	require.NoError(t, err)
	st := fplan.StageTables()[0]
	tw, twInv := devUint64(t, c, st.Twiddle, N), devUint64(t, c, st.TwiddleInv, N)

	cases := []struct {
		name string
		run  func() error
	}{
		{"Init", func() error { return bk.Init(nil, sh, in, abar, acc, 1<<29, count) }},
		{"RotateDecompose", func() error { return bk.RotateDecompose(nil, sh, acc, abar, dec, 3, count) }},
		{"MAC", func() error { return bk.MAC(nil, sh, dec, bkey, prod, 3, count) }},
		{"AddCentered", func() error { return bk.AddCentered(nil, acc, prod, count*(sh.K+1)*N) }},
		{"Extract", func() error { return bk.Extract(nil, sh, acc, ext, count) }},
		{"KeySwitch", func() error { return bk.KeySwitch(nil, sh, out, ext, table, count) }},
		{"KeySwitchPacked", func() error { return bk.KeySwitchPacked(nil, sh, out, ext, table, packed, count) }},
		{"BlindRotateFused", func() error { return bk.BlindRotateFused(nil, sh, 32, 32, in, bkey, tw, twInv, ext, 1<<29, count) }},
	}
	// The engine's staging copies: views of the pinned and device buffers,
	// made in the caller, which must not reach the heap.
	pinned, err := AllocHost[uint32](c, count*(n+1))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pinned.Free()) })
	stream, err := c.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stream.Close()) })
	cases = append(cases, struct {
		name string
		run  func() error
	}{"ViewCopies", func() error {
		k := count / 2 * (n + 1)
		if err := in.View(0, k).CopyFromHostAsync(pinned.View(0, k), stream); err != nil {
			return err
		}
		return out.View(k, 2*k).CopyToHostAsync(pinned.View(k, 2*k).View(0, k), stream)
	}})
	for _, ws := range bk.WideFor(gsh) {
		if ws.BlocksPerSample() != 1 {
			continue // cluster and split kernels: cuLaunchKernelEx, and the split kernel's scratch
		}
		cases = append(cases, struct {
			name string
			run  func() error
		}{"BlindRotateWide/" + ws.String(), func() error {
			return bk.BlindRotateWide(nil, gsh, ws, in, gkey, gtables, ext, 1<<29, count)
		}})
	}
	for _, tc := range cases {
		require.NoError(t, tc.run()) // warm-up: lazy set-up, pinner cache
		before := calls.Load()
		require.NoError(t, tc.run())
		perCall := calls.Load() - before
		if perCall == 0 {
			t.Errorf("%s: no driver call", tc.name)
		}
		allocs := testing.AllocsPerRun(20, func() { require.NoError(t, tc.run()) })
		if allocs > float64(perCall) {
			t.Errorf("%s: %.1f heap allocations a call, %d driver calls", tc.name, allocs, perCall)
		}
	}
}
