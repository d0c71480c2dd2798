package main

import (
	"strings"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/gpumon"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
)

// TestWritePower: with a GPU monitor the summary lists, per GPU case, the
// clock and power during its largest batch's timed runs, and the header
// gives the power limit; without one, neither.
func TestWritePower(t *testing.T) {
	t0 := time.Unix(5000, 0)
	var samples []gpumon.Sample
	for i := range 20 { // one a second; the power cap from second 10 on
		s := gpumon.Sample{At: t0.Add(time.Duration(i) * time.Second), SMClockMHz: 1980, PowerW: 600, TempC: 60}
		if i >= 10 {
			s.SMClockMHz, s.PowerW, s.Reasons = 1900, 700, gpumon.ReasonSWPowerCap
		}
		samples = append(samples, s)
	}
	gpu := fakeResult(engGPU, tfhe.TFHELib128, vGrouped3, 1, 16384)
	gpu.ms[0].from, gpu.ms[0].to = t0, t0.Add(5*time.Second)                              // batch 1: not listed
	gpu.ms[1].from, gpu.ms[1].to = t0.Add(10*time.Second), t0.Add(13500*time.Millisecond) // 4 samples, all capped
	// 5 calls of 16,384 gates in 3.15 of the window's 3.5 s, 1,400 J: 17.09 mJ a gate.
	gpu.ms[1].gates, gpu.ms[1].busy, gpu.ms[1].joules = 5*16384, 3150*time.Millisecond, 1400
	cpu := fakeResult(engCPU, tfhe.TFHELib128, "hybrid/32x32", 1)
	m := machine{gpu: &kernels.DeviceInfo{Name: "test GPU", SMs: 132}, cpuModel: "test CPU", mon: gpumon.Recorded("test GPU", 700, samples)}

	var b strings.Builder
	writeSummary(&b, m, config{reps: 5, maxGates: 100}, []caseResult{gpu, cpu}, nil, nil)
	out := b.String()
	for _, want := range []string{
		"power limit 700 W",
		"gpu TFHELib128 grouped3 b=16384: 1900 MHz on average (1900-1900), 700 W (at most 700), at most 60 °C; power cap in 4 of 4 samples" +
			"; 17.09 mJ a gate (energy counter over the timed runs, Bootstrap calls 90.0% of that time)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "b=1:") || strings.Contains(out, "cpu TFHELib128 hybrid/32x32 b=") {
		t.Errorf("summary lists a smaller batch or a CPU case:\n%s", out)
	}

	m.mon = nil
	b.Reset()
	writeSummary(&b, m, config{reps: 5, maxGates: 100}, []caseResult{gpu, cpu}, nil, nil)
	if out := b.String(); strings.Contains(out, "NVML") || strings.Contains(out, "power limit") {
		t.Errorf("without a monitor:\n%s", out)
	}
}
