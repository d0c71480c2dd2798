// Package gpumon samples an NVIDIA GPU's SM clock, board power, temperature
// and clock-event reasons (power cap, thermal slowdown) through NVML, the
// library the NVIDIA driver installs (libnvidia-ml.so.1, opened through
// purego: no cgo, nothing to build), so that a benchmark can say whether
// its GPU ran at full clock or held back by its power limit. Large-batch
// gate bootstrapping draws about 680–700 W on an H100 at 1,980 MHz, and a
// card at its 700 W cap lowers its clock by 1–4% on average (BENCHMARKS.md,
// "At a glance"): the same code measures differently on different cards,
// and these samples tell which case a run was in. It is what nvidia-smi
// --query-gpu=clocks.sm,power.draw,temperature.gpu,
// clocks_event_reasons.active reports, read in-process. Its energy
// counter (Monitor.EnergyJ) gives the board's energy per gate: a card held
// at its power limit of L watts runs about L / (joules per gate) gates a
// second.
//
// A Monitor is safe for use by several goroutines.
package gpumon

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Clock-event reasons (NVML's nvmlClocksEventReason… bits) that hold the
// SM clock below its maximum under load.
const (
	ReasonSWPowerCap   = 0x4  // the board's power limit (software)
	ReasonHWSlowdown   = 0x8  // hardware slowdown (power brake or thermal)
	ReasonSWThermal    = 0x20 // software thermal slowdown
	ReasonHWThermal    = 0x40 // hardware thermal slowdown
	ReasonHWPowerBrake = 0x80 // external power brake
)

// Sample is one reading.
type Sample struct {
	At         time.Time
	SMClockMHz uint32
	PowerW     float64 // board power
	TempC      uint32
	Reasons    uint64 // clock-event reasons, the Reason… bits and others
}

// Stats summarises samples.
type Stats struct {
	Samples                  int
	MeanClockMHz             float64
	MinClockMHz, MaxClockMHz uint32
	MeanPowerW, MaxPowerW    float64
	MaxTempC                 uint32
	PowerCapped              int // samples with the software power cap or a power brake
	Thermal                  int // samples with a thermal or hardware slowdown
}

// Summarize returns the statistics of samples (zero Stats for none).
func Summarize(samples []Sample) Stats {
	var s Stats
	for i, x := range samples {
		if i == 0 || x.SMClockMHz < s.MinClockMHz {
			s.MinClockMHz = x.SMClockMHz
		}
		s.MaxClockMHz = max(s.MaxClockMHz, x.SMClockMHz)
		s.MeanClockMHz += float64(x.SMClockMHz)
		s.MeanPowerW += x.PowerW
		s.MaxPowerW = max(s.MaxPowerW, x.PowerW)
		s.MaxTempC = max(s.MaxTempC, x.TempC)
		if x.Reasons&(ReasonSWPowerCap|ReasonHWPowerBrake) != 0 {
			s.PowerCapped++
		}
		if x.Reasons&(ReasonSWThermal|ReasonHWThermal|ReasonHWSlowdown) != 0 {
			s.Thermal++
		}
	}
	if s.Samples = len(samples); s.Samples > 0 {
		s.MeanClockMHz /= float64(s.Samples)
		s.MeanPowerW /= float64(s.Samples)
	}
	return s
}

// String reads, for example, "1954 MHz on average (1770-1980), 678 W
// (at most 705), at most 65 °C; power cap in 61 of 129 samples".
func (s Stats) String() string {
	if s.Samples == 0 {
		return "no sample"
	}
	out := fmt.Sprintf("%.0f MHz on average (%d-%d), %.0f W (at most %.0f), at most %d °C; power cap in %d of %d samples",
		s.MeanClockMHz, s.MinClockMHz, s.MaxClockMHz, s.MeanPowerW, s.MaxPowerW, s.MaxTempC, s.PowerCapped, s.Samples)
	if s.Thermal > 0 {
		out += fmt.Sprintf(", thermal slowdown in %d", s.Thermal)
	}
	return out
}

// source reads one sample (NVML, or a fake in tests).
type source interface {
	read() (Sample, error)
	// energyMJ is the energy the GPU has drawn since the driver loaded, in
	// millijoules; an error wrapping ErrNoEnergy where it is not reported.
	energyMJ() (uint64, error)
	close() error
}

// ErrNoEnergy is returned by EnergyJ where NVML does not report the GPU's
// energy counter (GPUs before Volta, recorded monitors).
var ErrNoEnergy = errors.New("gpumon: no energy counter")

// Monitor samples one GPU at a fixed interval between Start and Stop and
// keeps every sample, a few hundred bytes a minute at 250 ms.
type Monitor struct {
	// Device names the GPU sampled; PowerLimitW is its enforced power
	// limit (0 when NVML does not report it).
	Device      string
	PowerLimitW float64

	src source

	mu      sync.Mutex
	samples []Sample
	err     error         // the first read error; sampling stops there
	stop    chan struct{} // closed by Stop; nil before Start
	done    chan struct{} // closed when the sampling goroutine ends
	closed  bool
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("gpumon: monitor closed")

// Open opens NVML and the GPU of UUID uuid (kernels.DeviceInfo.UUID, as
// nvidia-smi -L writes it), or when uuid is empty or no GPU has it (a MIG
// instance's) the GPU on PCI bus pciBus (kernels.DeviceInfo.PCIBus; 0 when
// unknown, which takes the only GPU there is). The UUID is the sure match: GPUs passed through to a
// virtual machine may all report bus 0. It fails without the NVIDIA
// driver's NVML library, on platforms purego does not reach, and when no
// GPU or several match.
func Open(uuid string, pciBus int) (*Monitor, error) {
	src, dev, limit, err := openNVML(uuid, pciBus)
	if err != nil {
		return nil, err
	}
	return &Monitor{Device: dev, PowerLimitW: limit, src: src}, nil
}

// Recorded returns a Monitor that holds samples already taken (a replay of
// a log, or a test's), for Window; it samples nothing.
func Recorded(device string, powerLimitW float64, samples []Sample) *Monitor {
	return &Monitor{Device: device, PowerLimitW: powerLimitW, samples: slices.Clone(samples)}
}

// Start samples every interval on a goroutine of its own, from now until
// Stop or Close; a second Start, or Start on a Recorded monitor, does
// nothing.
func (m *Monitor) Start(every time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.stop != nil || m.src == nil {
		return nil
	}
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go m.loop(every, m.stop, m.done)
	return nil
}

func (m *Monitor) loop(every time.Duration, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s, err := m.src.read()
		m.mu.Lock()
		if err != nil {
			m.err = err
			m.mu.Unlock()
			return
		}
		m.samples = append(m.samples, s)
		m.mu.Unlock()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the sampling and waits for it; the samples stay.
func (m *Monitor) Stop() {
	m.mu.Lock()
	stop, done := m.stop, m.done
	if stop != nil {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}
	m.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Window returns a copy of the samples taken from from to to (inclusive),
// and the read error that ended the sampling, if any.
func (m *Monitor) Window(from, to time.Time) ([]Sample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Sample
	for _, s := range m.samples {
		if !s.At.Before(from) && !s.At.After(to) {
			out = append(out, s)
		}
	}
	return out, m.err
}

// EnergyJ reads the GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption,
// joules since the driver loaded): the difference of two readings is the
// board's energy between them, exact where sampled power is not. The
// counter's own update interval is NVML's; readings a second or more apart
// keep its granularity small.
func (m *Monitor) EnergyJ() (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, ErrClosed
	}
	if m.src == nil {
		return 0, fmt.Errorf("%w: a recorded monitor reads nothing", ErrNoEnergy)
	}
	mj, err := m.src.energyMJ()
	return float64(mj) / 1000, err
}

// Close stops the sampling and releases NVML.
func (m *Monitor) Close() error {
	m.Stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if m.src == nil {
		return nil
	}
	return m.src.close()
}
