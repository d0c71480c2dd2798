package gpuntt

import (
	"errors"
	"fmt"
	"sync"

	"github.com/goldfhe/goldfhe/smallntt"
)

// Transformer runs batched transforms of host polynomials on the GPU when
// one is usable and on the CPU plan otherwise; OnGPU and Reason say which
// and why. Either way the results are the CPU plan's, bit for bit, for any
// input words (those ≥ p are reduced first). It is safe for concurrent use.
type Transformer struct {
	cpu    *smallntt.Plan
	dev    *Device
	gpu    *Plan
	reason string
	mu     sync.Mutex // serialises GPU batches (one staging buffer)
	stage  *Polys
	closed bool // Close ran: the GPU resources are gone
}

// NewTransformer tries GPU 0 for plan p; any failure (no driver, no device,
// no kernels for it) selects the CPU. A plan that has no GPU kernel (a
// Hybrid shape outside kernels.HybridShapes, such as smallntt.DefaultPlan's
// 16×8×16 for N = 2048) runs as DefaultPlan of its size on the GPU: the
// same transform, bit for bit; Reason names it.
func NewTransformer(p *smallntt.Plan) *Transformer {
	t := &Transformer{cpu: p}
	if p == nil {
		t.reason = "no plan (nil *smallntt.Plan): every transform fails"
		return t
	}
	dev, err := Open(0)
	if err != nil {
		t.reason = fmt.Sprintf("CPU: no usable GPU: %v", err)
		return t
	}
	run, swap := p, "" // swap: how Reason names a stand-in plan
	if !HasKernel(p) {
		if run, err = DefaultPlan(p.N()); err != nil {
			dev.Close()
			t.reason = fmt.Sprintf("CPU: %v has no GPU kernel: %v", p, err)
			return t
		}
		swap = fmt.Sprintf(", %v run as %v (the same transform: no GPU kernel for %v)", p, run, p)
	}
	gp, err := dev.NewPlan(run)
	if err != nil {
		dev.Close()
		t.reason = fmt.Sprintf("CPU: %v%s", err, swap)
		return t
	}
	t.dev, t.gpu = dev, gp
	t.reason = fmt.Sprintf("GPU: %s (%s)%s", dev.Info().Name, dev.lib.Source(), swap)
	return t
}

// OnGPU reports whether NewTransformer chose the GPU (after Close, GPU
// transforms fail rather than move to the CPU).
func (t *Transformer) OnGPU() bool { return t.gpu != nil }

// Reason says where transforms run and, for the CPU, why not on the GPU.
func (t *Transformer) Reason() string { return t.reason }

// Forward transforms count = len(polys)/N polynomials in place. Words ≥ p
// are taken mod p, as the CPU plan takes them; on the GPU they are reduced
// in polys before the upload, so a failed call leaves each word either as
// it was or reduced, its value mod p unchanged.
func (t *Transformer) Forward(polys []uint64) error { return t.run(polys, false) }

// Inverse is the exact inverse of Forward, with inputs as Forward's.
func (t *Transformer) Inverse(polys []uint64) error { return t.run(polys, true) }

func (t *Transformer) run(polys []uint64, inverse bool) error {
	if t == nil || t.cpu == nil {
		return errors.New("gpuntt: Transformer without a plan (NewTransformer(nil))")
	}
	n := t.cpu.N()
	if len(polys)%n != 0 {
		return fmt.Errorf("gpuntt: %d coefficients are not whole polynomials of %d", len(polys), n)
	}
	count := len(polys) / n
	if t.gpu == nil {
		for i := 0; i < count; i++ {
			p := polys[i*n : (i+1)*n]
			if inverse {
				t.cpu.Inverse(smallntt.Poly(p), smallntt.NTTPoly(p))
			} else {
				t.cpu.Forward(smallntt.NTTPoly(p), smallntt.Poly(p))
			}
		}
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("gpuntt: Transformer used after Close")
	}
	// The kernels take canonical words (Plan.Forward); the CPU plans any.
	for i, x := range polys {
		if x >= smallntt.P {
			polys[i] = x - smallntt.P
		}
	}
	if t.stage == nil || t.stage.Count < count {
		if t.stage != nil {
			err := t.stage.Free()
			t.stage = nil // freed whatever Free said: never used again
			if err != nil {
				return err
			}
		}
		st, err := t.dev.AllocPolys(n, count)
		if err != nil {
			return err
		}
		t.stage = st
	}
	b := &Polys{N: n, Count: count, Buf: t.stage.Buf}
	if err := b.Upload(polys); err != nil {
		return err
	}
	var err error
	if inverse {
		err = t.gpu.Inverse(nil, b)
	} else {
		err = t.gpu.Forward(nil, b)
	}
	if err != nil {
		return err
	}
	return b.Download(polys)
}

// Close releases the GPU resources, if any; later GPU transforms fail.
// Close is idempotent.
func (t *Transformer) Close() error {
	if t.gpu == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var err error
	if t.stage != nil {
		err = t.stage.Free()
		t.stage = nil
	}
	return errors.Join(err, t.gpu.Close(), t.dev.Close())
}
