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
	gpu      *kernels.DeviceInfo  // GPU 0, nil when the GPU engine does not run
	gpus     int                  // GPUs the GPU cases run on (-gpus): 0 to gpus-1
	others   []kernels.DeviceInfo // GPUs 1 to gpus-1
	noGPU    string               // why not, when gpu is nil
	cpuModel string
	// mon samples GPU 0's clock and power while the cases run (nil
	// without NVML: noMon says why); otherMons read the other GPUs'
	// energy counters (nil when one cannot be opened: noOthers says why).
	mon       *gpumon.Monitor
	noMon     string
	otherMons []*gpumon.Monitor
	noOthers  string
}

// monitorEvery is how often mon samples: nvidia-smi -lms 250's rate.
const monitorEvery = 250 * time.Millisecond

// startMonitor samples GPU 0 through NVML while the cases run, or notes
// why it cannot; close stops it.
func (m *machine) startMonitor() (close func()) {
	if m.gpu == nil {
		return func() {}
	}
	mon, err := gpumon.Open(m.gpu.UUID, m.gpu.PCIBus)
	if err == nil {
		err = mon.Start(monitorEvery)
	}
	if err != nil {
		m.noMon = err.Error()
		return func() {}
	}
	m.mon = mon
	for _, d := range m.others {
		o, err := gpumon.Open(d.UUID, d.PCIBus)
		if err != nil {
			m.noOthers = fmt.Sprintf("GPU %d: %v", d.Ordinal, err)
			break
		}
		m.otherMons = append(m.otherMons, o)
	}
	if m.noOthers != "" {
		for _, o := range m.otherMons {
			o.Close()
		}
		m.otherMons = nil
	}
	return func() {
		mon.Close()
		for _, o := range m.otherMons {
			o.Close()
		}
	}
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

// energyMeter reads the energy counter in joules of GPU 0, or the sum of
// every GPU's that the cases run on, or is nil without a monitor of each.
// Where NVML does not report the counter every reading fails and the
// summary gives no energy.
func (m machine) energyMeter() func() (float64, error) {
	if m.mon == nil || len(m.otherMons) != len(m.others) {
		return nil
	}
	if len(m.otherMons) == 0 {
		return m.mon.EnergyJ
	}
	return func() (float64, error) {
		total, err := m.mon.EnergyJ()
		for _, o := range m.otherMons {
			e, oerr := o.EnergyJ()
			total += e
			err = errors.Join(err, oerr)
		}
		return total, err
	}
}

// probeGPU returns every GPU, or why there is none. A GPU that is there
// but that the engine cannot use (a fatbin without code for it…) shows up
// as an error of its cases.
func probeGPU() ([]kernels.DeviceInfo, error) {
	ds, err := kernels.Devices()
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%w: the driver reports 0 devices", kernels.ErrNoDevice)
	}
	return ds, nil
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
		if m.gpus > 1 {
			return fmt.Sprintf("GPUs 0 to %d (GPU 0: %v%s); host CPU: %s", m.gpus-1, *m.gpu, limit, host)
		}
		return fmt.Sprintf("GPU %d: %v%s; host CPU: %s", m.gpu.Ordinal, *m.gpu, limit, host)
	}
	return fmt.Sprintf("CPU: %s; no GPU: %s", host, m.noGPU)
}

// deviceName is the CSV's device column for an engine kind.
func (m machine) deviceName(engine string) string {
	if engine == engGPU && m.gpu != nil {
		if m.gpus > 1 {
			return fmt.Sprintf("%d x %s", m.gpus, m.gpu.Name)
		}
		return m.gpu.Name
	}
	return "CPU " + m.cpuModel
}
