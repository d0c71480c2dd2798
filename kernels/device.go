package kernels

import (
	"encoding/hex"
	"fmt"
	"unsafe"
)

// CUdevice_attribute values (cuda.h).
const (
	attrMaxThreadsPerBlock     = 1
	attrMaxSharedPerBlock      = 8
	attrWarpSize               = 10
	attrClockRate              = 13
	attrMultiprocessorCount    = 16
	attrPCIBusID               = 33
	attrMemoryClockRate        = 36
	attrGlobalMemoryBusWidth   = 37
	attrL2CacheSize            = 38
	attrComputeMajor           = 75
	attrComputeMinor           = 76
	attrMaxSharedPerSM         = 81
	attrMaxSharedPerBlockOptin = 97
)

// DeviceInfo describes one GPU as the driver reports it.
type DeviceInfo struct {
	Ordinal int    // the CUDA device ordinal (0, 1, …)
	Name    string // e.g. "NVIDIA H200"
	// UUID is the GPU's UUID as nvidia-smi and NVML write it,
	// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": unlike the ordinal, the
	// same in every process whatever CUDA_VISIBLE_DEVICES says (empty if
	// the driver does not say). For a MIG instance CUDA gives the
	// instance's UUID, which nvidia-smi writes "MIG-…" and NVML does not
	// list among its GPUs.
	UUID         string
	Major, Minor int    // compute capability, e.g. 9 and 0
	SMs          int    // streaming multiprocessors
	TotalMemory  uint64 // device memory in bytes
	L2Bytes      int    // L2 cache size in bytes
	// SharedPerBlock is the default per-block shared memory limit (48 KiB);
	// SharedPerBlockOptin is what a kernel gets after raising its dynamic
	// limit with Function.SetMaxDynamicSharedMemory.
	SharedPerBlock, SharedPerBlockOptin int
	SharedPerSM                         int // shared memory per multiprocessor
	MaxThreadsPerBlock                  int
	WarpSize                            int
	ClockKHz, MemoryClockKHz            int // peak clocks (0 if not reported)
	MemoryBusWidth                      int // bits (0 if not reported)
	PCIBus                              int // (0 if not reported)
}

// String gives a one-line summary, e.g.
// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, L2 60 MiB, smem/block 227 KiB)".
func (i DeviceInfo) String() string {
	return fmt.Sprintf("%s (sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB, smem/block %d KiB)",
		i.Name, i.Major, i.Minor, i.SMs, float64(i.TotalMemory)/(1<<30), i.L2Bytes>>20, i.SharedPerBlockOptin>>10)
}

// Arch returns the SASS architecture name, e.g. "sm_90".
func (i DeviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// DeviceCount returns the number of CUDA devices. Without a driver it
// returns an error wrapping ErrNoDriver.
func DeviceCount() (int, error) {
	d, err := theDriver()
	if err != nil {
		return 0, err
	}
	return d.deviceCount()
}

func (d *driver) deviceCount() (int, error) {
	var n int32
	if err := d.err("cuDeviceGetCount", d.call(symDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Devices describes every CUDA device.
func Devices() ([]DeviceInfo, error) {
	d, err := theDriver()
	if err != nil {
		return nil, err
	}
	n, err := d.deviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		_, info, err := d.device(i)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// device resolves ordinal to a CUdevice and reads its properties.
func (d *driver) device(ordinal int) (int32, DeviceInfo, error) {
	n, err := d.deviceCount()
	if err != nil {
		return 0, DeviceInfo{}, err
	}
	if n == 0 {
		return 0, DeviceInfo{}, fmt.Errorf("%w: the driver reports 0 devices", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= n {
		return 0, DeviceInfo{}, fmt.Errorf("%w: ordinal %d out of range [0, %d)", ErrNoDevice, ordinal, n)
	}
	var dev int32
	if err := d.err("cuDeviceGet", d.call(symDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(uint32(ordinal)))); err != nil {
		return 0, DeviceInfo{}, err
	}
	info := DeviceInfo{Ordinal: ordinal}
	var name [256]byte
	if err := d.err("cuDeviceGetName", d.call(symDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(uint32(dev)))); err != nil {
		return 0, DeviceInfo{}, err
	}
	info.Name = cStringBuf(name[:])
	var uuid [16]byte
	if d.call(symDeviceGetUuid, uintptr(unsafe.Pointer(&uuid[0])), uintptr(uint32(dev))) == resultSuccess {
		info.UUID = formatUUID(uuid) // else none: it only names the device to NVML
	}
	var total uint64
	if err := d.err("cuDeviceTotalMem_v2", d.call(symDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(uint32(dev)))); err != nil {
		return 0, DeviceInfo{}, err
	}
	info.TotalMemory = total
	for _, a := range []struct {
		attr int32
		dst  *int
		opt  bool // deprecated in CUDA 13: 0 where the driver no longer answers
	}{
		{attrComputeMajor, &info.Major, false},
		{attrComputeMinor, &info.Minor, false},
		{attrMultiprocessorCount, &info.SMs, false},
		{attrL2CacheSize, &info.L2Bytes, false},
		{attrMaxSharedPerBlock, &info.SharedPerBlock, false},
		{attrMaxSharedPerBlockOptin, &info.SharedPerBlockOptin, false},
		{attrMaxSharedPerSM, &info.SharedPerSM, false},
		{attrMaxThreadsPerBlock, &info.MaxThreadsPerBlock, false},
		{attrWarpSize, &info.WarpSize, false},
		{attrClockRate, &info.ClockKHz, true},
		{attrMemoryClockRate, &info.MemoryClockKHz, true},
		{attrGlobalMemoryBusWidth, &info.MemoryBusWidth, true},
		{attrPCIBusID, &info.PCIBus, true},
	} {
		var v int32
		r := d.call(symDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(uint32(a.attr)), uintptr(uint32(dev)))
		if r != resultSuccess && a.opt {
			continue
		}
		if err := d.err(fmt.Sprintf("cuDeviceGetAttribute(%d)", a.attr), r); err != nil {
			return 0, DeviceInfo{}, err
		}
		*a.dst = int(v)
	}
	return dev, info, nil
}

// formatUUID writes a CUuuid's 16 bytes as NVML does: "GPU-" and the
// bytes in hex, grouped 8-4-4-4-12.
func formatUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return "GPU-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
