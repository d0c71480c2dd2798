package gpuntt

import (
	"errors"
	"fmt"
	"slices"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
)

// Device is one GPU with goldfhe's kernels loaded.
type Device struct {
	ctx *kernels.Context
	lib *kernels.Library
}

// Open opens GPU ordinal and loads the kernels. Errors wrap the kernels
// sentinels (kernels.ErrNoDriver, kernels.ErrNoDevice, kernels.ErrNoFatbin…).
func Open(ordinal int) (*Device, error) {
	ctx, err := kernels.Open(ordinal)
	if err != nil {
		return nil, err
	}
	lib, err := ctx.LoadLibrary()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return &Device{ctx: ctx, lib: lib}, nil
}

// Info describes the GPU.
func (d *Device) Info() kernels.DeviceInfo { return d.ctx.Device() }

// Context returns the CUDA context, for streams, events and buffers.
func (d *Device) Context() *kernels.Context { return d.ctx }

// Library returns the loaded kernels.
func (d *Device) Library() *kernels.Library { return d.lib }

// Close unloads the kernels and releases the context.
func (d *Device) Close() error { return errors.Join(d.lib.Close(), d.ctx.Close()) }

// Polys is a batch of Count polynomials of N coefficients in GPU memory,
// stored one after another. Coefficients in [0, p); which domain they are in
// (coefficients or NTT) is the caller's to track.
type Polys struct {
	N, Count int
	Buf      *kernels.DeviceBuffer[uint64]
}

// AllocPolys allocates an uninitialised batch.
func (d *Device) AllocPolys(n, count int) (*Polys, error) {
	if n <= 0 || count < 0 {
		return nil, fmt.Errorf("gpuntt: AllocPolys(%d, %d): bad size", n, count)
	}
	buf, err := kernels.Alloc[uint64](d.ctx, max(n*count, 1))
	if err != nil {
		return nil, err
	}
	return &Polys{N: n, Count: count, Buf: buf}, nil
}

// Upload copies Count·N coefficients from host memory (polynomial after
// polynomial) to the batch.
func (p *Polys) Upload(src []uint64) error {
	if len(src) != p.N*p.Count {
		return fmt.Errorf("gpuntt: Upload: %d coefficients, the batch holds %d×%d", len(src), p.Count, p.N)
	}
	if len(src) == 0 {
		return nil
	}
	return p.Buf.View(0, len(src)).CopyFromHost(src)
}

// Download copies the batch to host memory.
func (p *Polys) Download(dst []uint64) error {
	if len(dst) != p.N*p.Count {
		return fmt.Errorf("gpuntt: Download: room for %d coefficients, the batch holds %d×%d", len(dst), p.Count, p.N)
	}
	if len(dst) == 0 {
		return nil
	}
	return p.Buf.View(0, len(dst)).CopyToHost(dst)
}

// Free releases the batch's memory.
func (p *Polys) Free() error { return p.Buf.Free() }

// upload puts a host table on the device.
func (d *Device) upload(t []uint64) (*kernels.DeviceBuffer[uint64], error) {
	b, err := kernels.Alloc[uint64](d.ctx, len(t))
	if err != nil {
		return nil, err
	}
	if err := b.CopyFromHost(t); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// Plan is a smallntt.Plan's tables on a GPU.
type Plan struct {
	d   *Device
	cpu *smallntt.Plan

	desc, descInv kernels.NTTDesc               // Matrix, MatrixNoMerge
	bf, bfInv     *kernels.DeviceBuffer[uint64] // Butterfly; Hybrid: T_1 and T'_1
	f1, f2        int
	owned         []*kernels.DeviceBuffer[uint64]
}

// NewPlan puts p's tables on the GPU. Every variant is supported; Hybrid only
// for two-stage factorisations in kernels.HybridShapes.
func (d *Device) NewPlan(p *smallntt.Plan) (*Plan, error) {
	g := &Plan{d: d, cpu: p}
	var upErr error
	up := func(t []uint64) *kernels.DeviceBuffer[uint64] {
		if t == nil || upErr != nil {
			return nil
		}
		b, err := d.upload(t)
		if err != nil {
			upErr = err
			return nil
		}
		g.owned = append(g.owned, b)
		return b
	}
	switch p.Variant() {
	case smallntt.Butterfly:
		fwd, inv := p.ButterflyTables()
		g.bf, g.bfInv = up(fwd), up(inv)
	case smallntt.Matrix, smallntt.MatrixNoMerge:
		g.desc = kernels.NTTDesc{N: p.N(), Negacyclic: true, Merge: p.Variant() == smallntt.Matrix}
		g.descInv = g.desc
		for _, st := range p.StageTables() {
			g.desc.Stages = append(g.desc.Stages, kernels.NTTStage{F: st.F, T: st.T, Size: st.Size, Twiddle: up(st.Twiddle)})
			g.descInv.Stages = append(g.descInv.Stages, kernels.NTTStage{F: st.F, T: st.T, Size: st.Size, Twiddle: up(st.TwiddleInv)})
		}
	case smallntt.Hybrid:
		if !HasKernel(p) {
			return nil, fmt.Errorf("gpuntt: no hybrid GPU kernel for %v (shapes: %v)", p, kernels.HybridShapes())
		}
		f := p.Factors()
		st := p.StageTables()[0]
		g.f1, g.f2 = f[0], f[1]
		g.bf, g.bfInv = up(st.Twiddle), up(st.TwiddleInv)
	default:
		return nil, fmt.Errorf("gpuntt: variant %v has no GPU kernel", p.Variant())
	}
	if upErr != nil {
		g.Close()
		return nil, fmt.Errorf("gpuntt: uploading the tables of %v: %w", p, upErr)
	}
	return g, nil
}

// HasKernel reports whether NewPlan can put p on a GPU (false for nil):
// every Butterfly, Matrix and MatrixNoMerge plan, and the Hybrid plans of
// the two-stage shapes in kernels.HybridShapes. A plan without a kernel
// has the same transform as DefaultPlan of its size (every plan of one
// size gives the same bits in the same layout), which is what Transformer
// runs instead.
func HasKernel(p *smallntt.Plan) bool {
	if p == nil {
		return false
	}
	switch p.Variant() {
	case smallntt.Butterfly, smallntt.Matrix, smallntt.MatrixNoMerge:
		return true
	case smallntt.Hybrid:
		f := p.Factors()
		return slices.ContainsFunc(kernels.HybridShapes(), func(s [2]int) bool { return len(f) == 2 && f[0] == s[0] && f[1] == s[1] })
	}
	return false
}

// DefaultPlan returns the GPU plan of size n that the measurements favour
// (nttbench, BENCHMARKS.md "GPU NTT"): the hybrid kernel F1×F2 = n with F1 ≤
// F2 (16×32 for 512; 32×32 for 1024, 2.84–2.91× the butterfly) up to n = 1024,
// and the butterfly beyond. At 2048 the faster plan depends on the card: on
// the committed kernels at batch 65,536 the hybrid 32×64 ran 1.13× the
// butterfly on an H200 and 0.87× on an H100 (session 42 runs E and G); the
// butterfly loses the less where it loses. It is the bootstrap GPU
// engine's default plan. Errors are smallntt.NewPlan's (an unsupported n).
func DefaultPlan(n int) (*smallntt.Plan, error) {
	for _, s := range kernels.HybridShapes() {
		if s[0]*s[1] == n && s[0] <= s[1] && n <= 1024 {
			return smallntt.NewPlan(n, smallntt.Hybrid, s[0], s[1])
		}
	}
	return smallntt.NewPlan(n, smallntt.Butterfly)
}

// HybridTables returns a Hybrid plan's stage-1 twiddle tables on the
// device, T_1 and T'_1 (smallntt.Plan.StageTables()[0]), which the fused
// bootstrapping kernels take; nil for other variants. They belong to the
// plan: valid until Close, not to be written.
func (g *Plan) HybridTables() (fwd, inv *kernels.DeviceBuffer[uint64]) {
	if g.cpu.Variant() != smallntt.Hybrid {
		return nil, nil
	}
	return g.bf, g.bfInv
}

// CPU returns the CPU plan this plan reproduces.
func (g *Plan) CPU() *smallntt.Plan { return g.cpu }

// String names the plan as smallntt does, with "/GPU".
func (g *Plan) String() string { return g.cpu.String() + "/GPU" }

// Forward transforms every polynomial of b in place (coefficients → NTT
// domain), enqueued on s (nil: the default stream). The kernels take
// canonical coefficients, in [0, p), and give canonical ones; a word ≥ p
// gives a wrong result, not an error (Transformer reduces its input first).
func (g *Plan) Forward(s *kernels.Stream, b *Polys) error { return g.run(s, b, false) }

// Inverse is the exact inverse of Forward.
func (g *Plan) Inverse(s *kernels.Stream, b *Polys) error { return g.run(s, b, true) }

func (g *Plan) run(s *kernels.Stream, b *Polys, inverse bool) error {
	if b == nil || b.N != g.cpu.N() {
		return fmt.Errorf("gpuntt: %v: batch of another size", g)
	}
	lib := g.d.lib
	switch g.cpu.Variant() {
	case smallntt.Butterfly:
		t := g.bf
		if inverse {
			t = g.bfInv
		}
		return lib.NTTButterfly(s, b.Buf, b.Count, b.N, t, inverse)
	case smallntt.Hybrid:
		t := g.bf
		if inverse {
			t = g.bfInv
		}
		return lib.NTTHybrid(s, b.Buf, b.Count, g.f1, g.f2, t, inverse)
	default:
		d := g.desc
		if inverse {
			d = g.descInv
		}
		return lib.NTTMatrix(s, b.Buf, b.Count, d, inverse)
	}
}

// Close frees the plan's tables.
func (g *Plan) Close() error {
	var errs []error
	for _, b := range g.owned {
		errs = append(errs, b.Free())
	}
	g.owned = nil
	return errors.Join(errs...)
}
