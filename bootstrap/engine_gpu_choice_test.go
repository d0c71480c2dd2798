package bootstrap

import (
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
)

// choiceEngine is a GPU engine's kernel choice without a device: the
// TFHELib128 wide-family kernels of grouping g on a device of sms SMs
// with sharedPerSM bytes of shared memory per SM (an H100 or H200: 132
// and 228 KiB).
func choiceEngine(t *testing.T, g, sms, sharedPerSM int) *GPU {
	t.Helper()
	e := &GPU{
		name:  "choice",
		shape: kernels.BootstrapShape{LWEDim: 630, LogN: 10, K: 1, BKLevels: 3, BKBaseLog: 7, Grouping: g},
		info:  kernels.DeviceInfo{SMs: sms, SharedPerSM: sharedPerSM},
	}
	kg := g
	if kg < 2 {
		kg = 0
	}
	for _, ws := range kernels.WideShapes() {
		if ws.F1 != 8 || ws.F2 != 8 || ws.F3 != 16 || ws.K != 1 || ws.L != 3 || ws.G != kg {
			continue
		}
		switch {
		case ws.Split != 0:
			if e.split.T == 0 || ws.Pre { // as init: the Pre split kernel when there is one
				e.split = ws
			}
		case ws.Cluster:
			e.cluster = ws
		case ws.T == 128:
			e.few = ws
		case ws.T == 64:
			e.wide = ws
		}
	}
	if e.split.T == 0 || e.cluster.T == 0 || e.few.T == 0 || e.wide.T == 0 {
		t.Fatalf("grouping %d: missing a kernel: %+v", g, e)
	}
	return e
}

// TestGPUKernelChoice: which kernel a pass of each size runs, and the
// batch tiers, on an H200-sized device: the split kernel up to SMs/8
// samples (up to SMs/4 for a grouped key, whose split kernel takes K'
// from the combine kernel), the cluster kernel up to SMs/2, the
// N/8-thread wide kernel up to SMs, then the wide one.
func TestGPUKernelChoice(t *testing.T) {
	const sms, smem = 132, 228 << 10
	for _, tc := range []struct {
		g     int
		split int // the largest pass that runs the split kernel
		tiers []int
	}{
		{0, 16, []int{16, 66, 132, 264}},
		{2, 33, []int{16, 33, 66, 132, 264}},
		{3, 33, []int{16, 33, 66, 132, 264}},
	} {
		e := choiceEngine(t, tc.g, sms, smem)
		if got := e.BatchTiers(); !slices.Equal(got, tc.tiers) {
			t.Errorf("grouping %d: tiers %v, want %v", tc.g, got, tc.tiers)
		}
		for _, c := range []struct {
			count int
			want  kernels.WideShape
		}{
			{1, e.split}, {tc.split, e.split}, {tc.split + 1, e.cluster}, {sms / 2, e.cluster},
			{sms/2 + 1, e.few}, {sms, e.few}, {sms + 1, e.wide}, {16384, e.wide},
		} {
			if got := e.wideFor(c.count); got != c.want {
				t.Errorf("grouping %d, %d samples: %s, want %s", tc.g, c.count, got, c.want)
			}
		}
	}
	// The split kernel that sums a key grouped by 3 itself (the engine's
	// fallback without memory for K'): its block takes more than half an
	// SM's shared memory, so one wave is SMs/8 - 1 clusters and a pass
	// takes two; without the shared-memory figure it is taken to run two
	// blocks per SM: one wave of SMs/8.
	for _, tc := range []struct{ smem, split int }{{smem, 30}, {0, sms / 8}} {
		e := choiceEngine(t, 3, sms, tc.smem)
		e.split.Pre = false
		if got := e.splitPassMax(); got != tc.split {
			t.Errorf("grouped by 3 without K', %d B shared per SM: split up to %d samples, want %d", tc.smem, got, tc.split)
		}
	}
}
