//go:build linux && (amd64 || arm64)

package gpumon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NVML's constants (nvml.h).
const (
	nvmlSuccess        = 0
	nvmlNotSupported   = 3
	nvmlClockSM        = 1
	nvmlTemperatureGPU = 0
	// nvmlPciInfo_t: busIdLegacy [16]byte, then domain, bus, device,
	// pciDeviceId, pciSubSystemId (uint32 each), then busId [32]byte: 68
	// bytes, bus at byte 20.
	pciInfoSize, pciBusOffset = 68, 20
)

// nvml is one device's NVML entry points.
type nvml struct {
	shutdown, clock, power, temp, reasons uintptr
	energy                                uintptr // 0 where NVML lacks it
	dev                                   uintptr // nvmlDevice_t
}

// call calls an NVML function; nvmlReturn_t is a 32-bit C enum.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

func openNVML(uuid string, pciBus int) (source, string, float64, error) {
	var h uintptr
	var err error
	for _, name := range []string{"libnvidia-ml.so.1", "libnvidia-ml.so"} {
		if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			break
		}
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("gpumon: no NVML (the NVIDIA driver's libnvidia-ml.so.1): %w", err)
	}
	sym := func(names ...string) (uintptr, error) {
		var err error
		for _, n := range names {
			var p uintptr
			if p, err = purego.Dlsym(h, n); err == nil {
				return p, nil
			}
		}
		return 0, fmt.Errorf("gpumon: NVML lacks %s: %w", names[0], err)
	}
	var (
		nvInit, count, byIndex, pci, limit, getName, getUUID uintptr
		n                                                    nvml
	)
	for _, s := range []struct {
		p     *uintptr
		names []string
	}{
		{&nvInit, []string{"nvmlInit_v2"}}, {&n.shutdown, []string{"nvmlShutdown"}},
		{&count, []string{"nvmlDeviceGetCount_v2"}}, {&byIndex, []string{"nvmlDeviceGetHandleByIndex_v2"}},
		{&pci, []string{"nvmlDeviceGetPciInfo_v3"}}, {&limit, []string{"nvmlDeviceGetEnforcedPowerLimit"}},
		{&n.clock, []string{"nvmlDeviceGetClockInfo"}}, {&n.power, []string{"nvmlDeviceGetPowerUsage"}},
		{&n.temp, []string{"nvmlDeviceGetTemperature"}}, {&getName, []string{"nvmlDeviceGetName"}},
		{&getUUID, []string{"nvmlDeviceGetUUID"}},
		// The newer name of the clock-event reasons, else the older one.
		{&n.reasons, []string{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}},
	} {
		if *s.p, err = sym(s.names...); err != nil {
			return nil, "", 0, err
		}
	}
	n.energy, _ = sym("nvmlDeviceGetTotalEnergyConsumption") // optional (NVML 9.0 on)
	if r := call(nvInit); r != nvmlSuccess {
		return nil, "", 0, fmt.Errorf("gpumon: nvmlInit_v2: NVML error %d", r)
	}
	var devs uint32
	if r := call(count, uintptr(unsafe.Pointer(&devs))); r != nvmlSuccess {
		call(n.shutdown)
		return nil, "", 0, fmt.Errorf("gpumon: nvmlDeviceGetCount_v2: NVML error %d", r)
	}
	// The GPU of uuid, else on pciBus; NVML numbers devices by PCI order
	// whatever CUDA_VISIBLE_DEVICES says, so the CUDA ordinal is no guide.
	type dev struct {
		h    uintptr
		bus  uint32
		uuid string
	}
	var all, match []dev
	for i := range devs {
		var d dev
		if call(byIndex, uintptr(i), uintptr(unsafe.Pointer(&d.h))) != nvmlSuccess {
			continue
		}
		var info [128]byte // nvmlPciInfo_t is 68 bytes
		if call(pci, d.h, uintptr(unsafe.Pointer(&info[0]))) != nvmlSuccess {
			continue
		}
		d.bus = binary.LittleEndian.Uint32(info[pciBusOffset:])
		var u [96]byte // NVML_DEVICE_UUID_V2_BUFFER_SIZE
		if call(getUUID, d.h, uintptr(unsafe.Pointer(&u[0])), uintptr(len(u))) == nvmlSuccess {
			if i := bytes.IndexByte(u[:], 0); i > 0 {
				d.uuid = string(u[:i])
			}
		}
		all = append(all, d)
		if uuid != "" && d.uuid == uuid {
			match = append(match, d)
		}
	}
	if len(match) == 0 {
		// No UUID given, or none of NVML's (a MIG instance's): the bus.
		for _, d := range all {
			if pciBus > 0 && int(d.bus) == pciBus {
				match = append(match, d)
			}
		}
		if pciBus <= 0 && len(all) == 1 {
			match = all
		}
	}
	if len(match) != 1 {
		var have []string
		for _, d := range all {
			have = append(have, fmt.Sprintf("%s on bus %d", d.uuid, d.bus))
		}
		call(n.shutdown)
		want := fmt.Sprintf("on PCI bus %d", pciBus)
		if uuid != "" {
			want = uuid + " or " + want
		}
		return nil, "", 0, fmt.Errorf("gpumon: not one NVML device %s (NVML's: %s)", want, strings.Join(have, ", "))
	}
	n.dev = match[0].h
	name := fmt.Sprintf("GPU on PCI bus %d", match[0].bus)
	var buf [96]byte // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	if call(getName, n.dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))) == nvmlSuccess {
		if i := bytes.IndexByte(buf[:], 0); i > 0 {
			name = string(buf[:i])
		}
	}
	var mw uint32
	limitW := 0.0
	if call(limit, n.dev, uintptr(unsafe.Pointer(&mw))) == nvmlSuccess {
		limitW = float64(mw) / 1000
	}
	return &n, name, limitW, nil
}

func (n *nvml) read() (Sample, error) {
	var clk, mw, temp uint32
	var reasons uint64
	s := Sample{At: time.Now()}
	for _, c := range []struct {
		name string
		r    int32
	}{
		{"nvmlDeviceGetClockInfo", call(n.clock, n.dev, nvmlClockSM, uintptr(unsafe.Pointer(&clk)))},
		{"nvmlDeviceGetPowerUsage", call(n.power, n.dev, uintptr(unsafe.Pointer(&mw)))},
		{"nvmlDeviceGetTemperature", call(n.temp, n.dev, nvmlTemperatureGPU, uintptr(unsafe.Pointer(&temp)))},
		{"nvmlDeviceGetCurrentClocksEventReasons", call(n.reasons, n.dev, uintptr(unsafe.Pointer(&reasons)))},
	} {
		if c.r != nvmlSuccess {
			return s, fmt.Errorf("gpumon: %s: NVML error %d", c.name, c.r)
		}
	}
	s.SMClockMHz, s.PowerW, s.TempC, s.Reasons = clk, float64(mw)/1000, temp, reasons
	return s, nil
}

func (n *nvml) energyMJ() (uint64, error) {
	if n.energy == 0 {
		return 0, fmt.Errorf("%w: NVML lacks nvmlDeviceGetTotalEnergyConsumption", ErrNoEnergy)
	}
	var mj uint64 // unsigned long long, millijoules
	switch r := call(n.energy, n.dev, uintptr(unsafe.Pointer(&mj))); r {
	case nvmlSuccess:
		return mj, nil
	case nvmlNotSupported:
		return 0, fmt.Errorf("%w: nvmlDeviceGetTotalEnergyConsumption: not supported on this GPU", ErrNoEnergy)
	default:
		return 0, fmt.Errorf("gpumon: nvmlDeviceGetTotalEnergyConsumption: NVML error %d", r)
	}
}

func (n *nvml) close() error {
	if r := call(n.shutdown); r != nvmlSuccess {
		return fmt.Errorf("gpumon: nvmlShutdown: NVML error %d", r)
	}
	return nil
}
