package bootstrap

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// benchPlans are the butterfly baseline and smallntt's default plan.
func benchPlans(b *testing.B, n int) []*smallntt.Plan {
	bf, err := smallntt.NewPlan(n, smallntt.Butterfly)
	require.NoError(b, err)
	def, err := smallntt.DefaultPlan(n)
	require.NoError(b, err)
	return []*smallntt.Plan{bf, def}
}

// BenchmarkBootstrap measures one gate bootstrap (blind rotation, sample
// extraction, key switching) on one core: the engine with one worker and a
// batch of one, with a plain key and with grouped ones (tfhe.WithGrouping 2
// and 3).
// Names: BenchmarkBootstrap/TFHELib128/N=1024/butterfly,
// BenchmarkBootstrap/TFHELib128/g2/N=1024/32x32/hybrid.
func BenchmarkBootstrap(b *testing.B) {
	for _, p := range tfhe.ParamSets() {
		for _, grouping := range []int{1, 2, 3} {
			kp := keyCache(p, 0, grouping)
			name := p.Name()
			if grouping > 1 {
				name += fmt.Sprintf("/g%d", grouping)
			}
			benchmarkBootstrapKey(b, p, kp, name)
		}
	}
}

func benchmarkBootstrapKey(b *testing.B, p tfhe.Params, kp keyPair, name string) {
	{
		in, _ := nandInputs(b, p, newEncryptor(b, kp.sk, 1), 1)
		out := newTLWEs(1, p.LWEDimension())
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := newCPU(b, kp.ck, CPUOptions{Plan: plan, Workers: 1})
			b.Run(name+"/"+plan.String(), func(b *testing.B) {
				cpu0 := processCPUTime()
				for b.Loop() {
					if err := e.Bootstrap(out, in, mu8); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/gate")
				// CPU time of the process (the one worker plus a little
				// runtime): robust to other processes on a shared machine.
				b.ReportMetric((processCPUTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/gate")
			})
			e.Close()
		}
	}
}

// BenchmarkBootstrapBatch measures throughput on all cores: a batch of
// 4·GOMAXPROCS gate bootstraps per operation; gates/s is the figure to read.
func BenchmarkBootstrapBatch(b *testing.B) {
	w := runtime.GOMAXPROCS(0)
	count := 4 * w
	for _, p := range tfhe.ParamSets() {
		kp := testKeys(p, 0)
		in, _ := nandInputs(b, p, newEncryptor(b, kp.sk, 2), count)
		out := newTLWEs(count, p.LWEDimension())
		for _, plan := range benchPlans(b, p.PolyDegree()) {
			e := newCPU(b, kp.ck, CPUOptions{Plan: plan})
			b.Run(fmt.Sprintf("%s/%v/workers=%d/batch=%d", p.Name(), plan, w, count), func(b *testing.B) {
				for b.Loop() {
					if err := e.Bootstrap(out, in, mu8); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "gates/s")
			})
			e.Close()
		}
	}
}
