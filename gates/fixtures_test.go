package gates_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// toyParams is a small, insecure set that keeps encrypted tests fast under
// -race.
var toyParams = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "toy", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
})

func seed(label string) [torus.SeedSize]byte {
	return torus.DeriveSeed([torus.SeedSize]byte{}, "gates-test/"+label, 0)
}

// fixture is the secret key of a parameter set, an encryptor, and lazily a
// CPU engine with its evaluator. Built once per test binary: key generation
// and the engine's key transform take a while.
type fixture struct {
	p   tfhe.Params
	sk  *tfhe.SecretKey
	enc *tfhe.Encryptor // guarded by mu (an Encryptor is not concurrency-safe)
	mu  sync.Mutex

	cpu, cpuGrouped func() (*gates.Evaluator, error)
}

var fixtures = func() func(p tfhe.Params) *fixture {
	var mu sync.Mutex
	m := map[string]*fixture{}
	return func(p tfhe.Params) *fixture {
		mu.Lock()
		defer mu.Unlock()
		if f, ok := m[p.Name()]; ok {
			return f
		}
		sk, err := tfhe.GenerateSecretKeyFromSeed(p, seed(p.Name()+"/sk"))
		if err != nil {
			panic(err)
		}
		enc, err := tfhe.NewEncryptorFromSeed(sk, seed(p.Name()+"/enc"))
		if err != nil {
			panic(err)
		}
		f := &fixture{p: p, sk: sk, enc: enc}
		cpu := func(label string, grouping int) func() (*gates.Evaluator, error) {
			return sync.OnceValues(func() (*gates.Evaluator, error) {
				ck, err := tfhe.GenerateCloudKeyFromSeed(sk, seed(p.Name()+label), tfhe.WithGrouping(grouping))
				if err != nil {
					return nil, err
				}
				eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
				if err != nil {
					return nil, err
				}
				return gates.NewEvaluator(eng)
			})
		}
		f.cpu, f.cpuGrouped = cpu("/ck", 1), cpu("/ck-grouped", 2)
		m[p.Name()] = f
		return f
	}
}()

// cpuEvaluator returns the fixture's evaluator on the CPU engine.
func (f *fixture) cpuEvaluator(t testing.TB) *gates.Evaluator {
	t.Helper()
	ev, err := f.cpu()
	require.NoError(t, err)
	return ev
}

// cpuGroupedEvaluator returns the fixture's evaluator on the CPU engine
// with a grouped bootstrapping key (tfhe.WithGrouping(2)).
func (f *fixture) cpuGroupedEvaluator(t testing.TB) *gates.Evaluator {
	t.Helper()
	ev, err := f.cpuGrouped()
	require.NoError(t, err)
	return ev
}

func (f *fixture) encrypt(bits ...bool) []*tfhe.TLWE {
	f.mu.Lock()
	defer f.mu.Unlock()
	cts, err := gates.EncryptBits(f.enc, bits)
	if err != nil {
		panic(err)
	}
	return cts
}

func (f *fixture) encryptUint(t testing.TB, v uint64, width int) []*tfhe.TLWE {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	cts, err := gates.EncryptUint(f.enc, v, width)
	require.NoError(t, err)
	return cts
}

func (f *fixture) decrypt(t testing.TB, cts ...*tfhe.TLWE) []bool {
	t.Helper()
	bits, err := gates.DecryptBits(f.sk, cts)
	require.NoError(t, err)
	return bits
}

// heavySets returns the parameter sets an encrypted test can afford: the
// toy set under -race -short, TFHELib128 under -short, every named set
// otherwise.
func heavySets(t testing.TB) []tfhe.Params {
	switch {
	case raceEnabled && testing.Short():
		t.Log("-race -short: toy parameter set only")
		return []tfhe.Params{toyParams}
	case testing.Short():
		return []tfhe.Params{tfhe.TFHELib128}
	}
	return tfhe.ParamSets()
}

// oracle is a bootstrap.Engine that cheats: it decrypts with the secret key
// and encrypts the answer afresh. It follows the Engine contract (phase in
// (0, 1/2) → +μ, else −μ) and is fast, so the evaluator's logic, batching
// and scheduling can be tested on large circuits; it records its calls.
type oracle struct {
	f      *fixture
	mu     sync.Mutex
	calls  []string // "B:3", "N:2", "K:1": kind and batch size
	closed bool
}

func newOracle(f *fixture) *oracle { return &oracle{f: f} }

func (o *oracle) Name() string        { return "oracle" }
func (o *oracle) Params() tfhe.Params { return o.f.p }
func (o *oracle) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return nil
}

func (o *oracle) check(kind string, out, in []*tfhe.TLWE, nin, nout int) error {
	if o.closed {
		return bootstrap.ErrClosed
	}
	if len(out) != len(in) {
		return errors.New("oracle: lengths differ")
	}
	for i := range in {
		if in[i] == nil || out[i] == nil || in[i].Dim() != nin || out[i].Dim() != nout {
			return fmt.Errorf("oracle: bad sample %d", i)
		}
	}
	if len(in) > 0 { // an empty call only asks the engine's state (free gates)
		o.calls = append(o.calls, fmt.Sprintf("%s:%d", kind, len(in)))
	}
	return nil
}

func (o *oracle) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.f.p.LWEDimension()
	if err := o.check("B", out, in, n, n); err != nil {
		return err
	}
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	for i := range in {
		o.f.enc.EncryptTLWETo(out[i], sign(o.f.sk.PhaseTLWE(in[i]), mu))
	}
	return nil
}

func (o *oracle) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.check("N", out, in, o.f.p.LWEDimension(), o.f.p.ExtractedLWEDimension()); err != nil {
		return err
	}
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	for i := range in {
		o.f.enc.EncryptExtractedTLWETo(out[i], sign(o.f.sk.PhaseTLWE(in[i]), mu), o.f.p.BKStdDev())
	}
	return nil
}

func (o *oracle) KeySwitch(out, in []*tfhe.TLWE) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.check("K", out, in, o.f.p.ExtractedLWEDimension(), o.f.p.LWEDimension()); err != nil {
		return err
	}
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	for i := range in {
		o.f.enc.EncryptTLWETo(out[i], o.f.sk.PhaseTLWE(in[i]))
	}
	return nil
}

func (o *oracle) log() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.calls
	o.calls = nil
	return l
}

// sign returns +mu for a phase in (0, 1/2) and −mu otherwise. The oracle
// refuses phases near 0 or 1/2: the gate constants must keep every phase at
// ±1/8 or more from them.
func sign(phase, mu torus.Torus32) torus.Torus32 {
	s := int64(phase.Signed())
	if d := min(abs(s), abs(s-1<<31), abs(s+1<<31)); d < 1<<27 {
		panic(fmt.Sprintf("oracle: phase %#x is within 1/32 of 0 or 1/2", uint32(phase)))
	}
	if s > 0 {
		return mu
	}
	return -mu
}

func abs(x int64) int64 { return max(x, -x) }
