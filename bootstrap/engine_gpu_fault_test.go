package bootstrap

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultFatbinEnv names the fatbin of `make fault-fatbin`, whose third
// key-switching launch in a loaded module traps (kernels/bootstrap.cuh,
// GOLDFHE_FAULT_POINT). TestGPUFault runs only where it is set.
const faultFatbinEnv = "GOLDFHE_FAULT_FATBIN"

// faultChildEnv carries the parameter set's name to TestGPUFault's child.
const faultChildEnv = "GOLDFHE_TEST_GPU_FAULT_CHILD"

// faultDeadline bounds every call of the child: a call that outlives it
// hangs instead of failing.
const faultDeadline = 3 * time.Minute

// TestGPUFault: a GPU that fails in the middle of a call (here a kernel
// that traps, which leaves the CUDA context unusable as an uncorrectable
// memory error or a GPU fallen off the bus does) gives errors, not
// crashes or hangs. The call fails with an error wrapping
// kernels.ErrLaunchFailed, its outputs are those of the passes finished
// before the fault (correct, a prefix of the batch) and untouched after it;
// later calls, concurrent ones and KeySwitch fail at once the same way,
// their outputs untouched; Close succeeds; and, since CUDA leaves the
// process unable to use the device after such a fault, New fails with
// UseGPU and builds the CPU engine with UseAuto, saying why. For the toy set (the step kernels, one
// pipeline slot) and TFHELib128 grouped by 3 (the wide kernels, two
// slots). Each set runs in a child process: the fault kills the process's
// primary context, which every other test shares.
func TestGPUFault(t *testing.T) {
	if name := os.Getenv(faultChildEnv); name != "" {
		gpuFaultChild(t, name)
		return
	}
	requireGPU(t)
	path := os.Getenv(faultFatbinEnv)
	if path == "" {
		t.Skipf("%s is not set: build the trapping fatbin with `make fault-fatbin` where nvcc is, and name it in %s", faultFatbinEnv, faultFatbinEnv)
	}
	for _, name := range []string{toyParams.Name(), tfhe.TFHELib128.Name()} {
		t.Run(name, func(t *testing.T) {
			// The child's own timeout ends it, with every goroutine's
			// stack, should a call hang where within does not watch.
			cmd := exec.Command(os.Args[0], "-test.run=^TestGPUFault$", "-test.v", "-test.count=1", "-test.timeout=10m")
			cmd.Env = append(os.Environ(), faultChildEnv+"="+name, kernels.FatbinEnv+"="+path)
			out, err := cmd.CombinedOutput()
			t.Logf("child process:\n%s", out)
			if err != nil || !strings.Contains(string(out), "FAULT-HANDLED") {
				t.Fatalf("child: %v", err)
			}
		})
	}
}

// within runs f on its own goroutine and returns its error, failing t if
// f has not returned after faultDeadline.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(faultDeadline):
		t.Fatalf("%s: no return after %v", what, faultDeadline)
		panic("unreachable")
	}
}

func gpuFaultChild(t *testing.T, name string) {
	var kp keyPair
	var p tfhe.Params
	maxBatch := 0
	switch name {
	case toyParams.Name():
		p, kp, maxBatch = toyParams, testKeys(toyParams, 0), 32
	case tfhe.TFHELib128.Name():
		p, kp, maxBatch = tfhe.TFHELib128, keyCache(tfhe.TFHELib128, 0, 3), 400
	default:
		t.Fatalf("unknown set %q", name)
	}
	n := p.LWEDimension()
	opts := Options{Use: UseGPU, GPU: GPUOptions{MaxBatch: maxBatch}}
	s, err := New(kp.ck, opts)
	require.NoError(t, err)
	t.Logf("%s (%s)", s.Name(), s.Reason())
	cpu := newCPU(t, kp.ck, CPUOptions{})
	rng := rand.New(rand.NewPCG(uint64(n), 5))

	// The fault: the third pass's key switching traps (one launch a pass).
	count := 6 * maxBatch
	in, _ := mixedInputs(t, p, kp, rng, count)
	out := poisonedTLWEs(count, n)
	err = within(t, "the faulting call", func() error { return s.Bootstrap(out, in, mu8) })
	if !errors.Is(err, kernels.ErrLaunchFailed) {
		t.Fatalf("the faulting call: %v, want an error wrapping kernels.ErrLaunchFailed", err)
	}
	t.Logf("the faulting call: %v", err)
	written := 0
	for written < count && !isPoisoned(out[written]) {
		written++
	}
	for i := written; i < count; i++ {
		if !isPoisoned(out[i]) {
			t.Fatalf("output %d written after output %d was not: the written outputs are not the first passes'", i, written)
		}
	}
	if written == 0 || written == count {
		t.Fatalf("%d of %d outputs written, want the first passes' (the third key switching traps)", written, count)
	}
	matchCPU(t, cpu, out[:written], in[:written], "the passes before the fault")
	t.Logf("outputs 0 to %d written before the fault, equal to the CPU engine's; %d to %d untouched", written-1, written, count-1)

	// Later calls fail at once, concurrent ones included.
	one := poisonedTLWEs(1, n)
	start := time.Now()
	err = within(t, "a call after the fault", func() error { return s.Bootstrap(one, in[:1], mu8) })
	if !errors.Is(err, kernels.ErrLaunchFailed) || !isPoisoned(one[0]) {
		t.Fatalf("a call after the fault: %v (output written: %v)", err, !isPoisoned(one[0]))
	}
	t.Logf("a call after the fault, %v: %v", time.Since(start).Round(time.Microsecond), err)
	errs := make([]error, 4)
	outs := make([][]*tfhe.TLWE, len(errs))
	within(t, "concurrent calls after the fault", func() error {
		var wg sync.WaitGroup
		for w := range errs {
			outs[w] = poisonedTLWEs(2, n)
			wg.Go(func() { errs[w] = s.Bootstrap(outs[w], in[:2], mu8) })
		}
		wg.Wait()
		return nil
	})
	for w, err := range errs {
		if !errors.Is(err, kernels.ErrLaunchFailed) || !isPoisoned(outs[w][0]) || !isPoisoned(outs[w][1]) {
			t.Errorf("concurrent call %d after the fault: %v (outputs untouched: %v)", w, err, isPoisoned(outs[w][0]) && isPoisoned(outs[w][1]))
		}
	}
	ks := poisonedTLWEs(1, n)
	ext := newTLWEs(1, p.ExtractedLWEDimension())
	if err := within(t, "KeySwitch after the fault", func() error { return s.KeySwitch(ks, ext) }); !errors.Is(err, kernels.ErrLaunchFailed) || !isPoisoned(ks[0]) {
		t.Errorf("KeySwitch after the fault: %v (output untouched: %v)", err, isPoisoned(ks[0]))
	}

	// Close releases the engine; the engine is then closed.
	assert.NoError(t, within(t, "Close after the fault", s.Close), "Close after the fault")
	assert.NoError(t, s.Close(), "second Close")
	if err := s.Bootstrap(one, in[:1], mu8); !errors.Is(err, ErrClosed) {
		t.Errorf("Bootstrap after Close: %v", err)
	}

	// CUDA documents such faults as leaving the process unable to use the
	// device: a GPU engine cannot be built again (an error, not a crash),
	// and New with UseAuto falls back to the CPU engine, saying why. (A
	// driver that gave the process the device back would pass too, its new
	// GPU engine checked against the CPU engine.)
	rest := in[written : written+min(8, count-written)]
	var s2 *Selected
	err = within(t, "New(UseGPU) after the fault", func() (err error) { s2, err = New(kp.ck, opts); return err })
	switch {
	case err == nil:
		t.Logf("New(UseGPU) after the fault: a GPU engine again (%s)", s2.Reason())
	case errors.Is(err, kernels.ErrLaunchFailed):
		t.Logf("New(UseGPU) after the fault: %v", err)
		auto := opts
		auto.Use = UseAuto
		require.NoError(t, within(t, "New(UseAuto) after the fault", func() (err error) { s2, err = New(kp.ck, auto); return err }), "New(UseAuto) after the fault")
		if s2.OnGPU() || !strings.HasPrefix(s2.Reason(), "CPU: ") || !strings.Contains(s2.Reason(), "CUDA_ERROR_LAUNCH_FAILED") {
			t.Fatalf("New(UseAuto) after the fault: OnGPU %v, reason %q", s2.OnGPU(), s2.Reason())
		}
		t.Logf("New(UseAuto) after the fault: %s", s2.Reason())
	default:
		t.Fatalf("New(UseGPU) after the fault: %v, want a GPU engine or an error wrapping kernels.ErrLaunchFailed", err)
	}
	defer s2.Close()
	out2 := newTLWEs(len(rest), n)
	require.NoError(t, within(t, "a call of the new engine", func() error { return s2.Bootstrap(out2, rest, mu8) }))
	matchCPU(t, cpu, out2, rest, "the engine built after the fault")
	t.Log("FAULT-HANDLED")
}

// matchCPU fails t unless got are cpu's bootstraps of in (of mu8).
func matchCPU(t *testing.T, cpu *CPU, got, in []*tfhe.TLWE, what string) {
	t.Helper()
	want := newTLWEs(len(in), cpu.Params().LWEDimension())
	require.NoError(t, cpu.Bootstrap(want, in, mu8))
	for i := range got {
		if !equalTLWE(got[i], want[i]) {
			t.Fatalf("%s: output %d differs from the CPU engine's", what, i)
		}
	}
}

const poison = 0x5A5A5A5A

// poisonedTLWEs returns count samples of dimension dim whose every word is
// poison: what no computed sample is.
func poisonedTLWEs(count, dim int) []*tfhe.TLWE {
	s := newTLWEs(count, dim)
	for _, x := range s {
		for j := range x.Value {
			x.Value[j] = poison
		}
	}
	return s
}

func isPoisoned(x *tfhe.TLWE) bool {
	for _, v := range x.Value {
		if v != poison {
			return false
		}
	}
	return true
}
