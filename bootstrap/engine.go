package bootstrap

import (
	"errors"
	"runtime"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Engine evaluates gate bootstrapping on batches of TLWE samples with the
// cloud key it was built from.
//
// Every method checks its input and returns an error — never panics — for
// mismatched lengths, nil samples, samples of the wrong dimension, samples
// that break the aliasing rule below, an engine that is closed or was not
// built by its constructor. Those checks come
// before any work: on such an error no output is written. An engine that
// runs a batch in passes may fail in a later pass (a device error of the
// GPU engine) and then leaves the outputs of the earlier passes written;
// a Multi whose engine fails leaves its other engines' shares written.
// On success out[i] depends only on in[i] (and the keys), so any split of a
// batch gives the same results.
//
// Aliasing: in Bootstrap, out[i] may be the same *tfhe.TLWE as in[i]
// (in-place bootstrapping); out[i] must not share memory with in[j] for
// j ≠ i, nor with another out[j]. In KeySwitch and BootstrapNoKeySwitch,
// whose outputs have another dimension, out[i] must not share memory with
// in[i] either. The engines find samples used twice (known by the
// address of their first word, so two TLWE values over one array too) and
// return an error; samples that overlap from different addresses are the
// caller's to avoid.
//
// Implementations are safe for concurrent use by multiple goroutines unless
// their documentation says otherwise; concurrent calls share the engine's
// workers.
//
// Noise: every engine key-switches as tfhe.Evaluator.KeySwitchTo does, with
// digits whose signs are balanced, so that its error has mean zero under
// every cloud key and outputs of different inputs have uncorrelated errors:
// sums of outputs (a linear XOR) have the variance tfhe.NoiseEstimate gives.
type Engine interface {
	// Name describes the engine and how it computes, for example
	// "cpu/N=1024/butterfly/workers=16".
	Name() string

	// Params returns the parameter set of the engine's cloud key.
	Params() tfhe.Params

	// Bootstrap sets, for each i, out[i] to a fresh TLWE sample under the
	// TLWE key (dimension n) of +mu if the phase of in[i] lies in (0, 1/2)
	// and of −mu if it lies in (1/2, 1) (phases within 1/(4N) of 0 or 1/2
	// may go either way): test vector, blind rotation, sample extraction and
	// key switching (DESIGN.md §2). in[i] and out[i] have dimension n, and
	// len(out) must equal len(in).
	Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error

	// BootstrapNoKeySwitch is Bootstrap without the final key switching:
	// out[i] is under the key extracted from the TRLWE key, of dimension
	// k·N (Params().ExtractedLWEDimension()). Sums of such samples are
	// key-switched once with KeySwitch (the MUX gate, DESIGN.md §2).
	BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error

	// KeySwitch switches each in[i] (dimension k·N, under the extracted
	// key) to out[i] (dimension n, under the TLWE key).
	KeySwitch(out, in []*tfhe.TLWE) error

	// Close releases the engine's workers and memory. Calls in progress
	// finish first; later calls return ErrClosed (before any check of
	// their arguments). Close is idempotent.
	Close() error
}

// KeyGrouping returns the grouping factor (tfhe.WithGrouping) of the
// bootstrapping key eng bootstraps with: 1 for a plain key, 2 or more for
// a grouped one, whose outputs are noisier (tfhe.Params.NoiseEstimateGrouped).
// It returns 0 when eng does not say: an engine from outside this package
// without a Grouping() int method, an uninitialized one, or one whose
// method gives a factor outside [1, tfhe.MaxGrouping]. Callers take 0 to
// mean the noisiest grouping.
func KeyGrouping(eng Engine) int {
	if g, ok := eng.(interface{ Grouping() int }); ok && eng != nil {
		if n := g.Grouping(); n >= 1 && n <= tfhe.MaxGrouping {
			return n
		}
	}
	return 0
}

// BatchTiers returns, for an engine whose time per call rises in steps
// with the batch size, the ascending batch sizes at which it steps: a batch
// of more than tiers[i−1] and at most tiers[i] samples takes about as long
// as one of tiers[i], and beyond the last tier the time grows about by
// multiples of it. It returns nil for an engine whose time grows with every
// sample (the CPU engine) or that has no BatchTiers() []int method.
// gates.Evaluator uses the tiers to fill a circuit's levels.
func BatchTiers(eng Engine) []int {
	if t, ok := eng.(interface{ BatchTiers() []int }); ok && eng != nil {
		return t.BatchTiers()
	}
	return nil
}

var (
	// ErrClosed is returned by the methods of an engine after Close.
	ErrClosed = errors.New("bootstrap: engine is closed")
	// ErrNotInitialized is returned by the methods of a zero-value or nil
	// engine (one not made by its constructor).
	ErrNotInitialized = errors.New("bootstrap: engine not initialized (use its constructor, e.g. NewCPU)")
)

// closeWhenDropped arranges for core, the state behind the engine handle h,
// to be closed some time after h becomes unreachable, and returns the
// cleanup for the handle's Close to stop. Each engine is split so: the
// handle (CPU, GPU, Multi) is what the user holds, and the core holds
// everything the engine's goroutines, queues and release reference, never
// the handle, so that dropping the handle lets the collector find it. The
// close runs on a goroutine of its own because it blocks (it waits for
// calls in progress and for the workers, and the GPU engine's makes driver
// calls), while the runtime runs cleanups on few goroutines shared by the
// whole program. Its error has nobody to go to.
//
// Every exported method of a handle keeps the handle alive until it
// returns (runtime.KeepAlive): a handle whose last use is a call must not
// be collected, and the core closed, between the call's load of the core
// and its taking the core's lock, which would fail it with ErrClosed.
func closeWhenDropped[H any, C interface{ Close() error }](h *H, core C) runtime.Cleanup {
	return runtime.AddCleanup(h, func(c C) { go c.Close() }, core)
}

// noCopy, the first field of each engine handle, makes go vet's copylocks
// check report a handle copied by value, as it did when the handles held
// their mutexes: a copy would share the core, but only the original
// carries the cleanup, which could close the core under the copy.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
