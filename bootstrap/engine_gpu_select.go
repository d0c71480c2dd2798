package bootstrap

import (
	"fmt"
	"strings"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Use says which engine New builds.
type Use int

const (
	// UseAuto builds the GPU engine when a GPU is usable and the CPU engine
	// otherwise (the zero value).
	UseAuto Use = iota
	// UseCPU always builds the CPU engine.
	UseCPU
	// UseGPU builds the GPU engine or fails.
	UseGPU
)

func (u Use) String() string {
	switch u {
	case UseAuto:
		return "UseAuto"
	case UseCPU:
		return "UseCPU"
	case UseGPU:
		return "UseGPU"
	}
	return fmt.Sprintf("Use(%d)", int(u))
}

// Options configures New: which engine, and the options of each.
type Options struct {
	Use Use
	CPU CPUOptions
	GPU GPUOptions
	// Devices lists the GPUs to spread calls over: with two or more, the
	// GPU engine New builds is NewGPUs over them (a *Multi), and
	// GPU.Device must be 0; one device is GPU.Device. nil: GPU.Device
	// alone. GPUDevices lists every device of the host.
	Devices []int
}

// Selected is the engine New built, with the reason it was chosen. It
// implements Engine by forwarding to that engine (a *GPU, a *Multi of GPU
// engines or a *CPU), with the same concurrency guarantees. A nil
// *Selected (what New returns with an error) or a zero Selected is an
// engine not built by its constructor: its methods return
// ErrNotInitialized, as Engine promises, and do not panic, so that
// `defer s.Close()` before checking New's error is safe.
type Selected struct {
	Engine
	reason string
	gpu    bool
}

// engine is the engine s forwards to, nil for a nil or zero Selected.
func (s *Selected) engine() Engine {
	if s == nil {
		return nil
	}
	return s.Engine
}

// Name is the Name of the engine s forwards to; "uninitialized" for a nil
// or zero Selected.
func (s *Selected) Name() string {
	if e := s.engine(); e != nil {
		return e.Name()
	}
	return "uninitialized"
}

// Params is the Params of the engine s forwards to; the zero Params for a
// nil or zero Selected.
func (s *Selected) Params() tfhe.Params {
	if e := s.engine(); e != nil {
		return e.Params()
	}
	return tfhe.Params{}
}

// Bootstrap is the Bootstrap of the engine s forwards to.
func (s *Selected) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	if e := s.engine(); e != nil {
		return e.Bootstrap(out, in, mu)
	}
	return ErrNotInitialized
}

// BootstrapNoKeySwitch is the BootstrapNoKeySwitch of the engine s
// forwards to.
func (s *Selected) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	if e := s.engine(); e != nil {
		return e.BootstrapNoKeySwitch(out, in, mu)
	}
	return ErrNotInitialized
}

// KeySwitch is the KeySwitch of the engine s forwards to.
func (s *Selected) KeySwitch(out, in []*tfhe.TLWE) error {
	if e := s.engine(); e != nil {
		return e.KeySwitch(out, in)
	}
	return ErrNotInitialized
}

// Close closes the engine s forwards to.
func (s *Selected) Close() error {
	if e := s.engine(); e != nil {
		return e.Close()
	}
	return ErrNotInitialized
}

// Reason says which engine was built and why, for example
// "GPU: NVIDIA H100 80GB HBM3 (sm_90, …)" or "CPU: bootstrap: no usable
// GPU: kernels: no CUDA driver: libcuda.so.1 not found …"; empty for a nil or
// zero Selected.
func (s *Selected) Reason() string {
	if s == nil {
		return ""
	}
	return s.reason
}

// Grouping returns the grouping factor of the engine's bootstrapping key
// (KeyGrouping of the engine it forwards to).
func (s *Selected) Grouping() int {
	if s == nil {
		return 0
	}
	return KeyGrouping(s.Engine)
}

// BatchTiers returns the BatchTiers of the engine it forwards to.
func (s *Selected) BatchTiers() []int {
	if s == nil {
		return nil
	}
	return BatchTiers(s.Engine)
}

// OnGPU reports whether the engine runs on a GPU (false for a nil or zero
// Selected).
func (s *Selected) OnGPU() bool { return s != nil && s.gpu }

// New builds the engine opts.Use asks for: with UseAuto (the zero Options)
// the GPU engine when NewGPU (NewGPUs, for two or more Options.Devices)
// succeeds, and the CPU engine otherwise — when there is no driver or
// device (or not every device listed), but also when the GPU engine cannot
// be built there for another reason (a fatbin without code for this GPU,
// too little memory…), which Reason then gives. Options that no machine
// could take are errors, not a reason to fall back, and are checked before
// any GPU is tried, with UseGPU and UseAuto alike: in GPU (a negative
// MaxBatch, an unknown BlindRotation, a plan of another N, a negative or
// repeated device, GPU.Device set beside Devices) and in CPU (a negative
// Workers, a plan of another N, Plan beside Variant). Both engines compute
// bit-identical outputs, so the choice affects speed only.
func New(ck *tfhe.CloudKey, opts Options) (*Selected, error) {
	switch opts.Use {
	case UseCPU:
		e, err := NewCPU(ck, opts.CPU)
		if err != nil {
			return nil, err
		}
		return &Selected{Engine: e, reason: "CPU: requested (UseCPU)"}, nil
	case UseGPU, UseAuto:
	default:
		return nil, fmt.Errorf("bootstrap: New: unknown %v", opts.Use)
	}
	if err := ck.Validate(); err != nil {
		return nil, fmt.Errorf("bootstrap: New: %w", err)
	}
	if err := opts.GPU.check(ck.Params()); err != nil {
		return nil, err // the caller's options, not this machine: no fallback
	}
	// The CPU options too, before any GPU is tried: a mistake in them
	// must not wait for the first machine without a usable GPU.
	cpuPlan, _, err := opts.CPU.resolve("New: Options.CPU", ck.Params())
	if err != nil {
		return nil, err
	}
	// The fallback below takes the plan built here rather than build it
	// again.
	cpuOpts := CPUOptions{Plan: cpuPlan, Workers: opts.CPU.Workers}
	if err := checkDevices(opts.Devices, opts.GPU); err != nil {
		return nil, fmt.Errorf("bootstrap: New: Options.Devices: %w", err)
	}
	if len(opts.Devices) == 1 {
		opts.GPU.Device = opts.Devices[0]
	}
	var (
		eng    Engine
		reason string
	)
	if len(opts.Devices) > 1 {
		var m *Multi
		if m, err = NewGPUs(ck, opts.Devices, opts.GPU); err == nil {
			eng, reason = m, multiReason(m)
		}
	} else {
		var g *GPU
		if g, err = NewGPU(ck, opts.GPU); err == nil {
			eng, reason = g, fmt.Sprintf("GPU: %v, %v", g.Device(), g.Plan())
		}
	}
	if err == nil {
		return &Selected{Engine: eng, gpu: true, reason: reason}, nil
	}
	if opts.Use == UseGPU {
		return nil, err
	}
	c, cerr := NewCPU(ck, cpuOpts)
	if cerr != nil {
		return nil, fmt.Errorf("%w (after the GPU engine failed: %v)", cerr, err)
	}
	return &Selected{Engine: c, reason: "CPU: " + err.Error()}, nil
}

// ParseUse reads an engine choice as a command line gives it: "auto", "cpu"
// or "gpu" (any case).
func ParseUse(s string) (Use, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return UseAuto, nil
	case "cpu":
		return UseCPU, nil
	case "gpu":
		return UseGPU, nil
	}
	return 0, fmt.Errorf("bootstrap: unknown engine %q (want auto, cpu or gpu)", s)
}

// multiReason is New's Reason for a Multi of GPU engines (NewGPUs: one
// plan for all): the plan, then each device.
func multiReason(m *Multi) string {
	var b strings.Builder
	engines := m.Engines()
	fmt.Fprintf(&b, "GPU: %d devices, %v", len(engines), gpuOf(engines[0]).Plan())
	for i, e := range engines {
		sep := ";"
		if i == 0 {
			sep = ":"
		}
		fmt.Fprintf(&b, "%s %d: %v", sep, gpuOf(e).Device().Ordinal, gpuOf(e).Device())
	}
	return b.String()
}
