package gpuntt

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
)

// BenchmarkGPUNTT times in-place forward transforms of a large batch with
// CUDA events (b.N launches between two events) and reports transforms/s;
// the examples/nttbench program gives the full tables over batch sizes.
func BenchmarkGPUNTT(b *testing.B) {
	d := openOrSkip(b)
	const batch = 1 << 16
	rng := rand.New(rand.NewPCG(9, 9))
	for _, p := range testPlans(b) {
		if p.N() < 512 || p.N() > 2048 {
			continue
		}
		g, err := d.NewPlan(p)
		if err != nil {
			b.Fatal(err)
		}
		polys, err := d.AllocPolys(p.N(), batch)
		if err != nil {
			b.Fatal(err)
		}
		if err := polys.Upload(testBatch(rng, p.N(), batch)); err != nil {
			b.Fatal(err)
		}
		name := strings.ReplaceAll(p.String(), "/", "_")
		b.Run(name+"/batch=65536", func(b *testing.B) {
			start, _ := d.ctx.NewEvent()
			stop, _ := d.ctx.NewEvent()
			defer start.Close()
			defer stop.Close()
			if err := g.Forward(nil, polys); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			start.Record(nil)
			for i := 0; i < b.N; i++ {
				if err := g.Forward(nil, polys); err != nil {
					b.Fatal(err)
				}
			}
			stop.Record(nil)
			if err := stop.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			el, err := kernels.ElapsedTime(start, stop)
			if err != nil {
				b.Fatal(err)
			}
			perLaunch := el.Seconds() / float64(b.N)
			b.ReportMetric(perLaunch*1e6, "µs/batch")
			b.ReportMetric(float64(batch)/perLaunch/1e6, "Mtransforms/s")
		})
		polys.Free()
		g.Close()
	}
}
