package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/goldfhe/goldfhe/kernels"
)

// machine describes what the cases run on.
type machine struct {
	gpu      *kernels.DeviceInfo // GPU 0, nil when the GPU engine does not run
	noGPU    string              // why not, when gpu is nil
	cpuModel string
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
		return fmt.Sprintf("GPU %d: %v; host CPU: %s", m.gpu.Ordinal, *m.gpu, host)
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
