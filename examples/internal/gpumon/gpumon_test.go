package gpumon

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarize(t *testing.T) {
	if s := Summarize(nil); s != (Stats{}) || s.String() != "no sample" {
		t.Errorf("no samples: %+v %q", s, s.String())
	}
	samples := []Sample{
		{SMClockMHz: 1980, PowerW: 650, TempC: 50},
		{SMClockMHz: 1770, PowerW: 705, TempC: 65, Reasons: ReasonSWPowerCap},
		{SMClockMHz: 1950, PowerW: 699, TempC: 61, Reasons: ReasonSWPowerCap | ReasonSWThermal},
		{SMClockMHz: 1980, PowerW: 400, TempC: 55, Reasons: 0x1}, // idle: neither
	}
	s := Summarize(samples)
	want := Stats{Samples: 4, MeanClockMHz: 1920, MinClockMHz: 1770, MaxClockMHz: 1980, MeanPowerW: 613.5, MaxPowerW: 705, MaxTempC: 65, PowerCapped: 2, Thermal: 1}
	if s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if got, w := s.String(), "1920 MHz on average (1770-1980), 614 W (at most 705), at most 65 °C; power cap in 2 of 4 samples, thermal slowdown in 1"; got != w {
		t.Errorf("String() = %q, want %q", got, w)
	}
}

// fakeSource counts its reads; it fails from read failAt on (0: never).
type fakeSource struct {
	mu            sync.Mutex
	reads, failAt int
	energy        uint64
	closed        bool
}

func (f *fakeSource) read() (Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.failAt > 0 && f.reads >= f.failAt {
		return Sample{}, errors.New("device lost")
	}
	return Sample{At: time.Now(), SMClockMHz: uint32(1000 + f.reads), PowerW: 500}, nil
}

// energyMJ counts 1.5 J a call.
func (f *fakeSource) energyMJ() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.energy += 1500
	return f.energy, nil
}

func (f *fakeSource) close() error { f.closed = true; return nil }

// TestMonitor: samples accumulate between Start and Stop, Window picks
// them by time, a read error ends the sampling and is reported, and Close
// releases the source once.
func TestMonitor(t *testing.T) {
	src := &fakeSource{}
	m := &Monitor{src: src}
	t0 := time.Now()
	require.NoError(t, m.Start(time.Millisecond))
	if err := m.Start(time.Millisecond); err != nil { // a second Start does nothing
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	m.Stop()
	m.Stop() // idempotent
	all, err := m.Window(t0, time.Now())
	if err != nil || len(all) < 3 {
		t.Fatalf("%d samples, error %v; want at least 3 in 30 ms at 1 ms", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) || all[i].SMClockMHz != all[i-1].SMClockMHz+1 {
			t.Fatalf("samples out of order: %+v then %+v", all[i-1], all[i])
		}
	}
	if mid, _ := m.Window(all[1].At, all[len(all)-2].At); len(mid) != len(all)-2 {
		t.Errorf("inner window: %d samples, want %d", len(mid), len(all)-2)
	}
	if none, _ := m.Window(time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)); len(none) != 0 {
		t.Errorf("future window: %d samples", len(none))
	}
	e0, err0 := m.EnergyJ()
	e1, err1 := m.EnergyJ()
	if err0 != nil || err1 != nil || e1-e0 != 1.5 {
		t.Errorf("EnergyJ: %v, %v then %v, %v; want readings 1.5 J apart", e0, err0, e1, err1)
	}
	if err := m.Close(); err != nil || !src.closed {
		t.Fatalf("Close: %v, source closed %v", err, src.closed)
	}
	if _, err := m.EnergyJ(); !errors.Is(err, ErrClosed) {
		t.Errorf("EnergyJ after Close: %v, want ErrClosed", err)
	}
	assert.NoError(t, m.Close(), "second Close")
	if err := m.Start(time.Millisecond); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}

	// A read error stops the sampling and comes back with the samples.
	bad := &Monitor{src: &fakeSource{failAt: 3}}
	require.NoError(t, bad.Start(time.Millisecond))
	time.Sleep(20 * time.Millisecond)
	got, err := bad.Window(t0, time.Now())
	if err == nil || !strings.Contains(err.Error(), "device lost") || len(got) != 2 {
		t.Errorf("after a failing read: %d samples, error %v; want 2 and the read's error", len(got), err)
	}
	bad.Close()
}

// TestRecorded: a monitor over samples already taken windows them and
// samples nothing.
func TestRecorded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var in []Sample
	for i := range 10 {
		in = append(in, Sample{At: t0.Add(time.Duration(i) * time.Second), SMClockMHz: uint32(1900 + i)})
	}
	m := Recorded("test GPU", 700, in)
	in[0].SMClockMHz = 0 // the monitor keeps its own copy
	require.NoError(t, m.Start(time.Millisecond))
	got, err := m.Window(t0.Add(2*time.Second), t0.Add(4*time.Second))
	if err != nil || len(got) != 3 || got[0].SMClockMHz != 1902 || got[2].SMClockMHz != 1904 {
		t.Errorf("Window: %+v, %v; want samples 2 to 4", got, err)
	}
	if all, _ := m.Window(t0, t0.Add(time.Hour)); len(all) != 10 || all[0].SMClockMHz != 1900 {
		t.Errorf("all: %d samples, first %+v", len(all), all[0])
	}
	if _, err := m.EnergyJ(); !errors.Is(err, ErrNoEnergy) {
		t.Errorf("EnergyJ of a recorded monitor: %v, want ErrNoEnergy", err)
	}
	assert.NoError(t, m.Close())
}

// TestOpenWithoutNVML: where the NVIDIA driver is not installed (CI), Open
// says so instead of failing later; where it is, the monitor reads.
func TestOpenWithoutNVML(t *testing.T) {
	m, err := Open("", 0)
	if err != nil {
		if !strings.Contains(err.Error(), "NVML") {
			t.Errorf("Open error %q does not name NVML", err)
		}
		t.Skipf("no NVML here: %v", err)
	}
	defer m.Close()
	s, err := m.src.read()
	if err != nil || s.SMClockMHz == 0 {
		t.Errorf("read: %+v, %v", s, err)
	}
	t.Logf("%s, power limit %.0f W: %s", m.Device, m.PowerLimitW, Summarize([]Sample{s}))
	if e, err := m.EnergyJ(); err != nil {
		if !errors.Is(err, ErrNoEnergy) {
			t.Errorf("EnergyJ: %v", err)
		}
		t.Logf("no energy counter: %v", err)
	} else {
		t.Logf("energy counter: %.3f J", e)
	}
}
