package main

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/gpumon"
	"github.com/goldfhe/goldfhe/kernels"
)

// machine describes what the cases run on.
type machine struct {
	gpu      *kernels.DeviceInfo // GPU 0, nil when the GPU engine does not run
	noGPU    string              // why not, when gpu is nil
	cpuModel string
	// mon samples GPU 0's clock and power while the cases run (nil
	// without NVML: noMon says why).
	mon   *gpumon.Monitor
	noMon string
}

// monitorEvery is how often mon samples: nvidia-smi -lms 250's rate.
const monitorEvery = 250 * time.Millisecond

// startMonitor samples GPU 0 through NVML while the cases run, or notes
// why it cannot; close stops it.
func (m *machine) startMonitor() (close func()) {
	if m.gpu == nil {
		return func() {}
	}
	mon, err := gpumon.Open(m.gpu.PCIBus)
	if err == nil {
		err = mon.Start(monitorEvery)
	}
	if err != nil {
		m.noMon = err.Error()
		return func() {}
	}
	m.mon = mon
	return func() { mon.Close() }
}

// power summarises GPU 0's samples during x's timed runs; ok is false
// without a monitor, err the read error that ended the sampling, if any.
func (m machine) power(x measurement) (s gpumon.Stats, ok bool, err error) {
	if m.mon == nil {
		return gpumon.Stats{}, false, nil
	}
	samples, err := m.mon.Window(x.from, x.to)
	return gpumon.Summarize(samples), true, err
}

// energyMeter reads GPU 0's energy counter in joules, or is nil without a
// monitor. Where NVML does not report the counter every reading fails and
// the summary gives no energy.
func (m machine) energyMeter() func() (float64, error) {
	if m.mon == nil {
		return nil
	}
	return m.mon.EnergyJ
}

// probeGPU returns GPU 0, or why there is none. A GPU that is there but
// that the engine cannot use (a fatbin without code for it…) shows up as
// an error of its cases.
func probeGPU() (kernels.DeviceInfo, error) {
	ds, err := kernels.Devices()
	if err != nil {
		return kernels.DeviceInfo{}, err
	}
	if len(ds) == 0 {
		return kernels.DeviceInfo{}, fmt.Errorf("%w: the driver reports 0 devices", kernels.ErrNoDevice)
	}
	return ds[0], nil
}

// errNoGPU is returned by run for -engine gpu without a usable GPU.
var errNoGPU = errors.New("no usable GPU")

// header is the first line of the summary.
func (m machine) header() string {
	host := fmt.Sprintf("%s, %d logical CPUs (%s/%s, GOMAXPROCS %d)", m.cpuModel, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	if m.gpu != nil {
		limit := ""
		if m.mon != nil && m.mon.PowerLimitW > 0 {
			limit = fmt.Sprintf(", power limit %.0f W", m.mon.PowerLimitW)
		}
		return fmt.Sprintf("GPU %d: %v%s; host CPU: %s", m.gpu.Ordinal, *m.gpu, limit, host)
	}
	return fmt.Sprintf("CPU: %s; no GPU: %s", host, m.noGPU)
}

// deviceName is the CSV's device column for an engine kind.
func (m machine) deviceName(engine string) string {
	if engine == engGPU && m.gpu != nil {
		return m.gpu.Name
	}
	return "CPU " + m.cpuModel
}
