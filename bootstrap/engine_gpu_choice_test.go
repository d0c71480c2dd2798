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
func choiceEngine(t *testing.T, g, sms, sharedPerSM int) *gpuCore {
	t.Helper()
	e := &gpuCore{
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
		case ws.Flat:
			e.flat = ws // as init: beside the t64 kernel, for large passes
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
// samples (for a grouped key, whose split kernel takes K' from the
// combine kernel, up to SMs/4 grouped by 2 and 60 of 132 SMs grouped by
// 3), the cluster kernel up to SMs/2, the N/8-thread wide kernel up to
// SMs, then the wide one; grouped by 3, the flat kernel from 8 of its
// waves (three samples per SM: 3,168 samples) and for whole waves of it
// (396 samples, 792, …).
func TestGPUKernelChoice(t *testing.T) {
	const sms, smem = 132, 228 << 10
	for _, tc := range []struct {
		g     int
		split int // the largest pass that runs the split kernel
		tiers []int
	}{
		{0, 16, []int{16, 66, 132, 264}},
		{2, 33, []int{16, 33, 66, 132, 264}},
		{3, 60, []int{16, 60, 66, 132, 264}},
	} {
		e := choiceEngine(t, tc.g, sms, smem)
		if got := e.BatchTiers(); !slices.Equal(got, tc.tiers) {
			t.Errorf("grouping %d: tiers %v, want %v", tc.g, got, tc.tiers)
		}
		large := e.wide
		if tc.g == 3 {
			if !e.flat.Flat || e.flatWaveSize() != 3*sms {
				t.Fatalf("grouped by 3: flat kernel %+v, wave %d, want one of 3 samples per SM", e.flat, e.flatWaveSize())
			}
			large = e.flat
		} else if e.flat.T != 0 {
			t.Errorf("grouping %d: a flat kernel %s", tc.g, e.flat)
		}
		for _, c := range []struct {
			count int
			want  kernels.WideShape
		}{
			{1, e.split}, {tc.split, e.split}, {tc.split + 1, e.cluster}, {sms / 2, e.cluster},
			{sms/2 + 1, e.few}, {sms, e.few}, {sms + 1, e.wide}, {264, e.wide},
			{8*3*sms - 1, e.wide}, {8 * 3 * sms, large}, {16384, large},
			// Whole waves of the flat kernel (grouped by 3) at any size.
			{3 * sms, large}, {3*sms + 1, e.wide}, {6 * sms, large}, {6*sms - 1, e.wide}, {30 * sms, large},
		} {
			if got := e.wideFor(c.count); got != c.want {
				t.Errorf("grouping %d, %d samples: %s, want %s", tc.g, c.count, got, c.want)
			}
		}
	}
	// Passes of at most MaxBatch samples: no tier beyond it, and it is
	// the last one when it cuts the list.
	for _, tc := range []struct {
		maxBatch int
		tiers    []int
	}{
		{1, []int{1}}, {16, []int{16}}, {40, []int{16, 40}}, {66, []int{16, 60, 66}},
		{100, []int{16, 60, 66, 100}}, {264, []int{16, 60, 66, 132, 264}}, {8192, []int{16, 60, 66, 132, 264}},
	} {
		e := choiceEngine(t, 3, sms, smem)
		e.maxBatch = tc.maxBatch
		if got := e.BatchTiers(); !slices.Equal(got, tc.tiers) {
			t.Errorf("grouped by 3, MaxBatch %d: tiers %v, want %v", tc.maxBatch, got, tc.tiers)
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

// TestGPUTailPasses: on an H200-sized device (waves of 264 samples for
// the wide kernel, 132 for the N/8-thread one), the remainder beyond whole
// waves runs in a pass of its own when the cluster or split kernel takes
// it (up to SMs/2 = 66 samples), and a remainder of 133 samples to 132 +
// splitPassMax (16 plain, 33 grouped by 2, 60 by 3) as a pass of 132 on
// the N/8-thread kernel and the rest on the split kernel; never for key
// switching alone, or beyond maxBatch.
func TestGPUTailPasses(t *testing.T) {
	const sms, smem = 132, 228 << 10
	for _, tc := range []struct{ g, split int }{{0, 16}, {2, 33}, {3, 60}} {
		g := tc.g
		e := choiceEngine(t, g, sms, smem)
		e.maxBatch = 8192
		if w, fw := e.waveSize(), e.fewWaveSize(); w != 2*sms || fw != sms {
			t.Fatalf("grouping %d: waves %d and %d, want %d and %d", g, w, fw, 2*sms, sms)
		}
		if got := e.splitPassMax(); got != tc.split {
			t.Fatalf("grouping %d: splitPassMax %d, want %d", g, got, tc.split)
		}
		s := tc.split
		for _, c := range []struct{ count, few, tail int }{
			{1, 0, 0}, {66, 0, 0}, {132, 0, 0}, {133, 132, 1}, {132 + s, 132, s}, {133 + s, 0, 0}, {199, 0, 0},
			{264, 0, 0}, {265, 0, 1}, {280, 0, 16}, {300, 0, 36}, {330, 0, 66}, {331, 0, 0},
			{396, 0, 0}, {397, 132, 1}, {396 + s, 132, s}, {397 + s, 0, 0}, {528, 0, 0}, {4240, 0, 16},
			{16368, 0, 0}, {16384, 0, 16}, {16400, 0, 32}, {16450, 0, 0}, {16500, 0, 0}, {16501, 132, 1},
		} {
			if few, tail := e.tailPasses(opBootstrap, c.count); few != c.few || tail != c.tail {
				t.Errorf("grouping %d, %d samples: last passes %d and %d, want %d and %d", g, c.count, few, tail, c.few, c.tail)
			}
			if few, tail := e.tailPasses(opKeySwitch, c.count); few != 0 || tail != 0 {
				t.Errorf("grouping %d, key switching %d samples: last passes %d and %d, want none", g, c.count, few, tail)
			}
		}
		e.maxBatch = 20
		if few, tail := e.tailPasses(opBootstrap, 300); few != 0 || tail != 0 {
			t.Errorf("grouping %d, maxBatch 20, 300 samples: last passes %d and %d, want none (36 > maxBatch)", g, few, tail)
		}
		if few, tail := e.tailPasses(opBootstrap, 280); few != 0 || tail != 16 {
			t.Errorf("grouping %d, maxBatch 20, 280 samples: last passes %d and %d, want 0 and 16", g, few, tail)
		}
		if few, tail := e.tailPasses(opBootstrap, 140); few != 0 || tail != 0 {
			t.Errorf("grouping %d, maxBatch 20, 140 samples: last passes %d and %d, want none (132 > maxBatch)", g, few, tail)
		}
		e.maxBatch = 132
		if few, tail := e.tailPasses(opBootstrap, 140); few != 132 || tail != 8 {
			t.Errorf("grouping %d, maxBatch 132, 140 samples: last passes %d and %d, want 132 and 8", g, few, tail)
		}
		e.maxBatch = 140
		e.split.T, e.cluster.T = 0, 0 // no tier kernel: no tail
		if few, tail := e.tailPasses(opBootstrap, 140); few != 0 || tail != 0 {
			t.Errorf("grouping %d, no split or cluster kernel, 140 samples: last passes %d and %d, want none", g, few, tail)
		}
		e = choiceEngine(t, g, sms, smem)
		// Measured waves replace the estimates.
		e.maxBatch = 8192
		e.wave, e.fewWave = 3*sms, sms
		if few, tail := e.tailPasses(opBootstrapNoKS, 3*sms+10); few != 0 || tail != 10 {
			t.Errorf("grouping %d, wave %d, %d samples: last passes %d and %d, want 0 and 10", g, 3*sms, 3*sms+10, few, tail)
		}
		if few, tail := e.tailPasses(opBootstrap, 3*sms+sms+5); few != sms || tail != 5 {
			t.Errorf("grouping %d, wave %d, %d samples: last passes %d and %d, want %d and 5", g, 3*sms, 4*sms+5, few, tail, sms)
		}
	}
	// Without a cluster kernel the split kernel's largest pass bounds the
	// tail after whole waves too.
	e := choiceEngine(t, 2, sms, smem)
	e.maxBatch = 8192
	e.cluster = kernels.WideShape{}
	if few, tail := e.tailPasses(opBootstrap, 264+33); few != 0 || tail != 33 {
		t.Errorf("no cluster kernel, 297 samples: last passes %d and %d, want 0 and 33", few, tail)
	}
	if few, tail := e.tailPasses(opBootstrap, 264+34); few != 0 || tail != 0 {
		t.Errorf("no cluster kernel, 298 samples: last passes %d and %d, want none", few, tail)
	}
	// Without the N/8-thread kernel, no pass of it.
	e = choiceEngine(t, 2, sms, smem)
	e.maxBatch = 8192
	e.few = kernels.WideShape{}
	if few, tail := e.tailPasses(opBootstrap, 150); few != 0 || tail != 0 {
		t.Errorf("no N/8-thread kernel, 150 samples: last passes %d and %d, want none", few, tail)
	}
}

// TestGPUBodyPasses: on 132 SMs with two slots, a body too small for
// passes of flatMinWaves flat waves (3,168 samples) runs its whole flat
// waves (396 samples) in about as many passes as passSize would make, and
// the rest after them in one pass; larger bodies, other groupings and key
// switching alone keep passSize's passes. A call of 4,096 gates grouped by
// 3 so runs four flat passes, then 132 samples on the N/8-thread kernel
// and 4 on the split kernel.
func TestGPUBodyPasses(t *testing.T) {
	const sms, smem = 132, 228 << 10
	engine := func(g int) *gpuCore {
		e := choiceEngine(t, g, sms, smem)
		e.maxBatch = 16384
		e.buf.slots = make([]passSlot, 2)
		return e
	}
	e := engine(3)
	for _, c := range []struct {
		op                 opKind
		body, whole, chunk int
	}{
		{opBootstrap, 300, 300, 300},      // below a flat wave
		{opBootstrap, 396, 396, 396},      // one wave
		{opBootstrap, 1000, 792, 792},     // one pass (passSize), two waves, 208 after
		{opBootstrap, 3960, 3960, 1188},   // four passes of 990 -> 3, 3, 3 and 1 waves
		{opBootstrap, 8184, 7920, 1980},   // 4 x 2,046 -> 4 x 5 waves, 264 after
		{opBootstrap, 12000, 11880, 3168}, // 4 x 3,000 -> 4 x 8 waves (less in the last), 120 after
		{opBootstrap, 12672, 12672, 3168}, // passSize's passes are 8 waves: unchanged
		{opBootstrap, 16368, 16368, 4092},
		{opBootstrapNoKS, 3960, 3960, 1188},
		{opKeySwitch, 3960, 3960, 990}, // no blind rotation
	} {
		if whole, chunk := e.bodyPasses(c.op, c.body); whole != c.whole || chunk != c.chunk {
			t.Errorf("grouped by 3, op %d, body %d: %d in passes of %d, want %d in passes of %d", c.op, c.body, whole, chunk, c.whole, c.chunk)
		}
	}
	// A pass holds at most maxBatch samples: whole waves up to it, or
	// passSize's passes where a wave does not fit.
	for _, c := range []struct{ maxBatch, body, whole, chunk int }{
		{1000, 3960, 3960, 792},  // passSize 990: four passes, three waves each would be 1,188
		{1188, 3960, 3960, 1188}, // exactly three waves
		{395, 3960, 3960, 395},   // not one wave
	} {
		e.maxBatch = c.maxBatch
		if whole, chunk := e.bodyPasses(opBootstrap, c.body); whole != c.whole || chunk != c.chunk || chunk > c.maxBatch {
			t.Errorf("maxBatch %d, body %d: %d in passes of %d, want %d in passes of %d", c.maxBatch, c.body, whole, chunk, c.whole, c.chunk)
		}
	}
	// Every plan covers its body in order, no pass empty or above maxBatch.
	for _, mb := range []int{1, 100, 395, 396, 500, 1000, 1188, 2000, 8192, 16384} {
		e.maxBatch = mb
		for body := 1; body <= 14000; body += 37 {
			whole, chunk := e.bodyPasses(opBootstrap, body)
			next := 0
			for lo, hi := range passBounds(body, whole, chunk, body-whole) {
				if lo != next || hi <= lo || hi-lo > mb {
					t.Fatalf("maxBatch %d, body %d (%d in passes of %d): pass [%d, %d) after %d", mb, body, whole, chunk, lo, hi, next)
				}
				next = hi
			}
			if next != body {
				t.Fatalf("maxBatch %d, body %d: passes end at %d", mb, body, next)
			}
		}
	}
	e.maxBatch = 16384
	for _, g := range []int{0, 2} {
		if whole, chunk := engine(g).bodyPasses(opBootstrap, 3960); whole != 3960 || chunk != 990 {
			t.Errorf("grouping %d (no flat kernel), body 3960: %d in passes of %d, want 3960 in passes of 990", g, whole, chunk)
		}
	}

	// The whole plan of a 4,096-gate call, as run makes it.
	few, tail := e.tailPasses(opBootstrap, 4096)
	body := 4096 - few - tail
	whole, chunk := e.bodyPasses(opBootstrap, body)
	var got [][2]int
	var kinds []kernels.WideShape
	for lo, hi := range passBounds(4096, whole, chunk, body-whole, few) {
		got = append(got, [2]int{lo, hi})
		kinds = append(kinds, e.wideFor(hi-lo))
	}
	want := [][2]int{{0, 1188}, {1188, 2376}, {2376, 3564}, {3564, 3960}, {3960, 4092}, {4092, 4096}}
	wantKinds := []kernels.WideShape{e.flat, e.flat, e.flat, e.flat, e.few, e.split}
	if !slices.Equal(got, want) || !slices.Equal(kinds, wantKinds) {
		t.Errorf("4,096 gates: passes %v on %v, want %v on %v", got, kinds, want, wantKinds)
	}
}

// TestPassBounds: passes cover the call in order, none empty, none longer
// than chunk before body, then each positive size of then in one pass,
// then the rest in one; a caller that stops early gets no more.
func TestPassBounds(t *testing.T) {
	for _, c := range []struct {
		count, body, chunk, mid int
		want                    [][2]int
	}{
		{0, 0, 0, 0, nil},
		{5, 5, 5, 0, [][2]int{{0, 5}}},
		{10, 10, 4, 0, [][2]int{{0, 4}, {4, 8}, {8, 10}}},
		{280, 264, 264, 0, [][2]int{{0, 264}, {264, 280}}},
		{150, 0, 0, 132, [][2]int{{0, 132}, {132, 150}}},
		{414, 264, 264, 132, [][2]int{{0, 264}, {264, 396}, {396, 414}}},
		{16384, 16368, 4092, 0, [][2]int{{0, 4092}, {4092, 8184}, {8184, 12276}, {12276, 16368}, {16368, 16384}}},
		{300, 264, 50, 0, [][2]int{{0, 50}, {50, 100}, {100, 150}, {150, 200}, {200, 250}, {250, 264}, {264, 300}}},
	} {
		var got [][2]int
		for lo, hi := range passBounds(c.count, c.body, c.chunk, c.mid) {
			got = append(got, [2]int{lo, hi})
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("passBounds(%d, %d, %d, %d) = %v, want %v", c.count, c.body, c.chunk, c.mid, got, c.want)
		}
	}
	// Several passes after the body, empty ones skipped, the last clipped
	// to the call.
	for _, c := range []struct {
		count, body, chunk int
		then               []int
		want               [][2]int
	}{
		{4096, 3960, 1188, []int{0, 132}, [][2]int{{0, 1188}, {1188, 2376}, {2376, 3564}, {3564, 3960}, {3960, 4092}, {4092, 4096}}},
		{8192, 7920, 1980, []int{264, 0}, [][2]int{{0, 1980}, {1980, 3960}, {3960, 5940}, {5940, 7920}, {7920, 8184}, {8184, 8192}}},
		{1000, 792, 792, []int{208, 0}, [][2]int{{0, 792}, {792, 1000}}},
		{100, 0, 0, []int{30, 200, 5}, [][2]int{{0, 30}, {30, 100}}},
		{10, 4, 4, nil, [][2]int{{0, 4}, {4, 10}}},
	} {
		var got [][2]int
		for lo, hi := range passBounds(c.count, c.body, c.chunk, c.then...) {
			got = append(got, [2]int{lo, hi})
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("passBounds(%d, %d, %d, %v) = %v, want %v", c.count, c.body, c.chunk, c.then, got, c.want)
		}
	}
	n := 0
	for range passBounds(100, 100, 10, 0) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("stopped after %d passes, want 3", n)
	}
}
