package bootstrap

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mu8 = torus.Encode(1, 8)

// TestCPUGates checks gate bootstrapping (NAND) with every set and several
// fresh keys, and that Bootstrap = KeySwitch ∘ BootstrapNoKeySwitch bit for
// bit.
func TestCPUGates(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			keys, count := 3, 8
			if testing.Short() && p.Name() != toyParams.Name() {
				keys, count = 1, 4
			}
			for ki := range keys {
				kp := testKeys(p, ki)
				e := newCPU(t, kp.ck, CPUOptions{})
				in, want := nandInputs(t, p, newEncryptor(t, kp.sk, ki), count)
				out := newTLWEs(count, p.LWEDimension())
				require.NoError(t, e.Bootstrap(out, in, mu8))
				ext := newTLWEs(count, p.ExtractedLWEDimension())
				require.NoError(t, e.BootstrapNoKeySwitch(ext, in, mu8))
				ks := newTLWEs(count, p.LWEDimension())
				require.NoError(t, e.KeySwitch(ks, ext))
				for i := range out {
					if got := kp.sk.DecryptBool(out[i]); got != want[i] {
						t.Fatalf("key %d, gate %d: NAND = %v, want %v", ki, i, got, want[i])
					}
					if got := kp.sk.DecryptBool(ext[i]); got != want[i] {
						t.Fatalf("key %d, gate %d: NAND without key switching = %v", ki, i, got)
					}
					if !equalTLWE(ks[i], out[i]) {
						t.Fatalf("key %d, gate %d: KeySwitch(BootstrapNoKeySwitch) ≠ Bootstrap", ki, i)
					}
				}
				// In place: out[i] = in[i].
				require.NoError(t, e.Bootstrap(in, in, mu8))
				for i := range in {
					if !equalTLWE(in[i], out[i]) {
						t.Fatalf("in-place bootstrap differs at %d", i)
					}
				}
			}
		})
	}
}

// TestCPUGroupedGates runs NAND gates with grouped keys of factor 2 and 3
// (tfhe.WithGrouping) on the butterfly and default plans: correct, and the
// same bits. Under -short factor 3 runs on TFHELib128 and the toy set.
func TestCPUGroupedGates(t *testing.T) {
	for _, p := range heavySets(t) {
		for g := 2; g <= tfhe.MaxGrouping; g++ {
			if g == 3 && testing.Short() && p.Name() != tfhe.TFHELib128.Name() && p.Name() != toyParams.Name() {
				continue // -short: the other sets' keys of 7/3 the size take a while to make
			}
			t.Run(fmt.Sprintf("%s/g=%d", p.Name(), g), func(t *testing.T) { testCPUGroupedGates(t, p, g) })
		}
	}
}

func testCPUGroupedGates(t *testing.T, p tfhe.Params, g int) {
	count := 8
	if testing.Short() && p.Name() != toyParams.Name() {
		count = 3
	}
	kp := keyCache(p, 0, g)
	in, want := nandInputs(t, p, newEncryptor(t, kp.sk, 5), count)
	var first []*tfhe.TLWE
	bf, err := smallntt.NewPlan(p.PolyDegree(), smallntt.Butterfly)
	require.NoError(t, err)
	def, err := smallntt.DefaultPlan(p.PolyDegree())
	require.NoError(t, err)
	for _, plan := range []*smallntt.Plan{bf, def} {
		e := newCPU(t, kp.ck, CPUOptions{Plan: plan})
		if want := fmt.Sprintf("/grouping=%d", g); !strings.HasSuffix(e.Name(), want) {
			t.Errorf("engine name %q does not end in %s", e.Name(), want)
		}
		if kg := KeyGrouping(e); kg != g || e.Grouping() != g {
			t.Errorf("KeyGrouping = %d, Grouping = %d, want %d", kg, e.Grouping(), g)
		}
		out := newTLWEs(count, p.LWEDimension())
		require.NoError(t, e.Bootstrap(out, in, mu8))
		for i := range out {
			if got := kp.sk.DecryptBool(out[i]); got != want[i] {
				t.Fatalf("%v: gate %d: NAND = %v, want %v", plan, i, got, want[i])
			}
			if first != nil && !equalTLWE(out[i], first[i]) {
				t.Fatalf("%v: gate %d differs from the butterfly plan's", plan, i)
			}
		}
		first = out
	}
}

func equalTLWE(a, b *tfhe.TLWE) bool {
	if len(a.Value) != len(b.Value) {
		return false
	}
	for i := range a.Value {
		if a.Value[i] != b.Value[i] {
			return false
		}
	}
	return true
}

// factorisations lists the ordered factorisations of n into {4, 8, 16, 32, 64}.
func factorisations(n int) [][]int {
	if n == 1 {
		return [][]int{{}}
	}
	var out [][]int
	for _, f := range []int{4, 8, 16, 32, 64} {
		if n%f == 0 {
			for _, rest := range factorisations(n / f) {
				out = append(out, append([]int{f}, rest...))
			}
		}
	}
	return out
}

// allPlans returns every plan smallntt.NewPlan accepts for size n: each
// variant (probed by number, so variants added later are covered) with no
// factorisation and with every factorisation into {4, …, 64}.
func allPlans(t testing.TB, n int) []*smallntt.Plan {
	var plans []*smallntt.Plan
	for v := smallntt.Variant(1); v <= 16; v++ {
		if p, err := smallntt.NewPlan(n, v); err == nil {
			plans = append(plans, p)
		}
		for _, f := range factorisations(n) {
			if p, err := smallntt.NewPlan(n, v, f...); err == nil {
				plans = append(plans, p)
			}
		}
	}
	if len(plans) == 0 {
		t.Fatalf("no plan for N=%d", n)
	}
	return plans
}

// TestCPUPlansBitIdentical checks that every NTT plan gives the same bits
// (same keys, same inputs), as DESIGN.md §3 promises.
func TestCPUPlansBitIdentical(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			plans := allPlans(t, p.PolyDegree())
			count := 4
			if p.Name() != toyParams.Name() {
				count = 2 // ~90 plans for N=1024: each costs a key transform and count bootstraps
			}
			if testing.Short() && p.Name() != toyParams.Name() {
				// Each plan costs a bootstrapping-key transform and a few
				// bootstraps: keep the first (a matrix plan) and the default.
				def, err := smallntt.DefaultPlan(p.PolyDegree())
				require.NoError(t, err)
				plans = []*smallntt.Plan{plans[0], def}
				count = 2
			}
			kp := testKeys(p, 0)
			in, _ := nandInputs(t, p, newEncryptor(t, kp.sk, 7), count)
			ref := newTLWEs(count, p.LWEDimension())
			refPlan, err := smallntt.NewPlan(p.PolyDegree(), smallntt.Butterfly)
			require.NoError(t, err)
			require.NoError(t, newCPU(t, kp.ck, CPUOptions{Plan: refPlan}).Bootstrap(ref, in, mu8))
			for _, plan := range plans {
				e, err := NewCPU(kp.ck, CPUOptions{Plan: plan})
				require.NoErrorf(t, err, "%v", plan)
				out := newTLWEs(count, p.LWEDimension())
				err = e.Bootstrap(out, in, mu8)
				e.Close()
				require.NoErrorf(t, err, "%v", plan)
				for i := range out {
					if !equalTLWE(out[i], ref[i]) {
						t.Fatalf("%v: output %d differs from the butterfly plan's", plan, i)
					}
				}
			}
			t.Logf("%d plans agree: %s", len(plans), planNames(plans))
		})
	}
}

func planNames(ps []*smallntt.Plan) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// TestCPUDigest pins the bits of a seeded computation: seeded keys and
// inputs, gate bootstraps chained over several rounds, SHA-256 of every
// output. Any change of key generation, encryption, decomposition, NTT
// exactness or key switching changes it; every engine (and the GPU one)
// must reproduce it.
func TestCPUDigest(t *testing.T) {
	p := tfhe.TFHELib128
	rounds, want := 3, "908f1fd1f0dc6db3217bfd6b9ee462901edd804ab7bffbe66963a46e3980057d"
	if testing.Short() {
		rounds, want = 1, "5f2e91c72c6c7928c661d0ebd25b5862ea263c212736c9418cead18b5a98eac8"
	}
	if raceEnabled && testing.Short() {
		p, rounds, want = toyParams, 3, "dc12530fc5929c63d485d944a5c7c398c2f4b5e44215d6860b24dd500a4543ae"
	}
	kp := testKeys(p, 0)
	e := newCPU(t, kp.ck, CPUOptions{})
	got := digestRun(t, e, kp, rounds)
	if got != want {
		t.Errorf("%s, %d rounds: digest %s, want %s", p.Name(), rounds, got, want)
	}
}

func digestRun(t testing.TB, e Engine, kp keyPair, rounds int) string {
	p := e.Params()
	const count = 8
	enc := newEncryptor(t, kp.sk, 99)
	bits := make([]*tfhe.TLWE, count)
	plain := make([]bool, count)
	for i := range bits {
		plain[i] = i%3 == 0
		bits[i] = enc.EncryptBool(plain[i])
	}
	h := sha256.New()
	in, out := newTLWEs(count, p.LWEDimension()), newTLWEs(count, p.LWEDimension())
	for range rounds {
		// NAND of neighbours: (0, 1/8) − b_i − b_{i+1}.
		for i := range in {
			in[i].SetTrivial(mu8)
			tfhe.SubTLWETo(in[i], in[i], bits[i])
			tfhe.SubTLWETo(in[i], in[i], bits[(i+1)%count])
		}
		require.NoError(t, e.Bootstrap(out, in, mu8))
		var b [4]byte
		next := make([]bool, count)
		for i := range out {
			next[i] = !(plain[i] && plain[(i+1)%count])
			if kp.sk.DecryptBool(out[i]) != next[i] {
				t.Fatalf("round output %d decrypts wrong", i)
			}
			for _, x := range out[i].Value {
				binary.LittleEndian.PutUint32(b[:], uint32(x))
				h.Write(b[:])
			}
			bits[i].CopyFrom(out[i])
		}
		plain = next
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestCPUWorkersIndependent(t *testing.T) {
	p := toyParams
	kp := testKeys(p, 0)
	in, want := nandInputs(t, p, newEncryptor(t, kp.sk, 3), 16)
	var ref []*tfhe.TLWE
	for _, w := range []int{1, 2, 5} {
		out := newTLWEs(len(in), p.LWEDimension())
		e := newCPU(t, kp.ck, CPUOptions{Workers: w})
		if e.Workers() != w || !strings.Contains(e.Name(), fmt.Sprintf("workers=%d", w)) {
			t.Fatalf("engine %q does not report %d workers", e.Name(), w)
		}
		require.NoError(t, e.Bootstrap(out, in, mu8))
		for i := range out {
			if kp.sk.DecryptBool(out[i]) != want[i] || (ref != nil && !equalTLWE(out[i], ref[i])) {
				t.Fatalf("workers=%d: output %d wrong or different", w, i)
			}
		}
		ref = out
	}
}

// TestCPUConcurrent runs calls from several goroutines at once, and Close
// while calls are running (run it with -race).
func TestCPUConcurrent(t *testing.T) {
	p := toyParams
	kp := testKeys(p, 0)
	e := newCPU(t, kp.ck, CPUOptions{Workers: 3})
	var wg sync.WaitGroup
	for g := range 4 {
		in, want := nandInputs(t, p, newEncryptor(t, kp.sk, 20+g), 5)
		wg.Go(func() {
			for range 3 {
				out := newTLWEs(len(in), p.LWEDimension())
				if err := e.Bootstrap(out, in, mu8); err != nil {
					t.Error(err)
					return
				}
				for i := range out {
					if kp.sk.DecryptBool(out[i]) != want[i] {
						t.Errorf("goroutine %d: output %d wrong", g, i)
					}
				}
			}
		})
	}
	wg.Wait()

	e2, err := NewCPU(kp.ck, CPUOptions{Workers: 2})
	require.NoError(t, err)
	in, _ := nandInputs(t, p, newEncryptor(t, kp.sk, 30), 4)
	for range 3 {
		wg.Go(func() {
			for range 5 {
				out := newTLWEs(len(in), p.LWEDimension())
				if err := e2.Bootstrap(out, in, mu8); err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
			}
		})
	}
	e2.Close()
	wg.Wait()
	assert.NoError(t, e2.Close(), "second Close")
}

// TestCPUErrors feeds bad input to every method: errors, never panics, and
// no output written.
func TestCPUErrors(t *testing.T) {
	p := toyParams
	kp := testKeys(p, 0)
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	e := newCPU(t, kp.ck, CPUOptions{Workers: 2})
	good := func(c int) []*tfhe.TLWE { return newTLWEs(c, n) }
	cases := []struct {
		name string
		call func() error
	}{
		{"length mismatch", func() error { return e.Bootstrap(good(2), good(3), mu8) }},
		{"nil input", func() error { return e.Bootstrap(good(2), []*tfhe.TLWE{tfhe.NewTLWE(n), nil}, mu8) }},
		{"nil output", func() error { return e.Bootstrap([]*tfhe.TLWE{nil}, good(1), mu8) }},
		{"empty sample", func() error { return e.Bootstrap(good(1), []*tfhe.TLWE{{}}, mu8) }},
		{"input dimension", func() error { return e.Bootstrap(good(1), newTLWEs(1, n+1), mu8) }},
		{"output dimension", func() error { return e.Bootstrap(newTLWEs(1, kn), good(1), mu8) }},
		{"no-KS output dimension", func() error { return e.BootstrapNoKeySwitch(good(1), good(1), mu8) }},
		{"KS input dimension", func() error { return e.KeySwitch(good(1), good(1)) }},
		{"KS output dimension", func() error { return e.KeySwitch(newTLWEs(1, kn), newTLWEs(1, kn)) }},
		{"other set's ciphertexts", func() error {
			return e.Bootstrap(newTLWEs(1, tfhe.TFHELib128.LWEDimension()), newTLWEs(1, tfhe.TFHELib128.LWEDimension()), mu8)
		}},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			if err := c.call(); err == nil {
				t.Errorf("%s: no error", c.name)
			}
		}()
	}
	assert.NoError(t, e.Bootstrap(nil, nil, mu8), "empty batch")

	// Uninitialized and closed engines.
	var zero CPU
	var nilE *CPU
	for name, en := range map[string]Engine{"zero": &zero, "nil": nilE} {
		if err := en.Bootstrap(good(1), good(1), mu8); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("%s engine Bootstrap: %v", name, err)
		}
		if err := en.BootstrapNoKeySwitch(newTLWEs(1, kn), good(1), mu8); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("%s engine BootstrapNoKeySwitch: %v", name, err)
		}
		if err := en.KeySwitch(good(1), newTLWEs(1, kn)); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("%s engine KeySwitch: %v", name, err)
		}
		if err := en.Close(); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("%s engine Close: %v", name, err)
		}
		_ = en.Name()
		_ = en.Params()
	}
	closed := newCPU(t, kp.ck, CPUOptions{Workers: 1})
	closed.Close()
	if err := closed.Bootstrap(good(1), good(1), mu8); !errors.Is(err, ErrClosed) {
		t.Errorf("Bootstrap after Close: %v", err)
	}
	if err := closed.Bootstrap(good(1), good(2), mu8); !errors.Is(err, ErrClosed) {
		t.Errorf("Bootstrap after Close, bad arguments: %v, want ErrClosed", err)
	}

	// Constructor errors.
	badPlan, _ := smallntt.NewPlan(512, smallntt.Butterfly)
	okPlan, _ := smallntt.NewPlan(256, smallntt.Butterfly)
	ctors := []struct {
		name string
		ck   *tfhe.CloudKey
		opts CPUOptions
	}{
		{"nil key", nil, CPUOptions{}},
		{"empty key", &tfhe.CloudKey{}, CPUOptions{}},
		{"plan of the wrong size", kp.ck, CPUOptions{Plan: badPlan}},
		{"plan and variant", kp.ck, CPUOptions{Plan: okPlan, Variant: smallntt.Butterfly}},
		{"factors without variant", kp.ck, CPUOptions{Factors: []int{16, 16}}},
		{"bad factorisation", kp.ck, CPUOptions{Variant: smallntt.Matrix, Factors: []int{3, 5}}},
		{"unknown variant", kp.ck, CPUOptions{Variant: 99}},
		{"negative workers", kp.ck, CPUOptions{Workers: -1}},
		{"a million workers", kp.ck, CPUOptions{Workers: 1 << 20}},
	}
	for _, c := range ctors {
		if e, err := NewCPU(c.ck, c.opts); err == nil {
			e.Close()
			t.Errorf("NewCPU(%s) succeeded", c.name)
		}
	}
	// Two Closes at once: both return only once the workers have stopped.
	// The workers take 20 ms to stop, so the second Close comes while
	// they run whichever Close gets the lock first.
	e2 := newCPU(t, kp.ck, CPUOptions{Workers: 4})
	e2.c.stopHook = func() { time.Sleep(20 * time.Millisecond) }
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			e2.Close()
			if n := workersOf(e2); n != 0 {
				t.Errorf("Close returned with %d workers running", n)
			}
		})
	}
	wg.Wait()
}

func TestCPUAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	p := toyParams
	kp := testKeys(p, 0)
	e := newCPU(t, kp.ck, CPUOptions{Workers: 2})
	in, _ := nandInputs(t, p, newEncryptor(t, kp.sk, 4), 6)
	out := newTLWEs(len(in), p.LWEDimension())
	ext := newTLWEs(len(in), p.ExtractedLWEDimension())
	if n := testing.AllocsPerRun(5, func() { e.Bootstrap(out, in, mu8) }); n != 0 {
		t.Errorf("Bootstrap allocates %v times per batch", n)
	}
	if n := testing.AllocsPerRun(5, func() { e.BootstrapNoKeySwitch(ext, in, mu8) }); n != 0 {
		t.Errorf("BootstrapNoKeySwitch allocates %v times per batch", n)
	}
	if n := testing.AllocsPerRun(5, func() { e.KeySwitch(out, ext) }); n != 0 {
		t.Errorf("KeySwitch allocates %v times per batch", n)
	}
}

func TestCPUName(t *testing.T) {
	kp := testKeys(toyParams, 0)
	e := newCPU(t, kp.ck, CPUOptions{Workers: 1})
	def, _ := smallntt.DefaultPlan(256)
	if e.Name() != "cpu/"+def.String()+"/workers=1" || e.String() != e.Name() {
		t.Errorf("Name() = %q", e.Name())
	}
	if !e.Params().Equal(toyParams) || e.Plan() == nil {
		t.Error("Params/Plan wrong")
	}
	sel := &Selected{Engine: e}
	if KeyGrouping(e) != 1 || sel.Grouping() != 1 {
		t.Errorf("KeyGrouping of a plain key's engine = %d, through Selected %d, want 1", KeyGrouping(e), sel.Grouping())
	}
	var none *CPU
	if KeyGrouping(none) != 0 || KeyGrouping(nil) != 0 || (*Selected)(nil).Grouping() != 0 {
		t.Error("KeyGrouping of a nil engine is not 0")
	}
	// The CPU's time grows with every sample: no tiers.
	if BatchTiers(e) != nil || sel.BatchTiers() != nil || (*Selected)(nil).BatchTiers() != nil || BatchTiers(nil) != nil {
		t.Error("a CPU engine reports batch tiers")
	}
}

// workersOf counts the goroutines running e's workers (CPU.work with e as
// its receiver), from their stacks.
func workersOf(e *CPU) int {
	buf := make([]byte, 1<<20)
	recv := fmt.Sprintf("bootstrap.(*cpuCore).work(%p", e.c)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, recv) {
			n++
		}
	}
	return n
}
