package kernels

import "testing"

// TestDevices enumerates the GPUs (skipped, with the reason, without any).
func TestDevices(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		skipOrFail(t, err)
	}
	devs, err := Devices()
	must(t, err)
	if len(devs) != n || n == 0 {
		t.Fatalf("%d devices listed, DeviceCount %d", len(devs), n)
	}
	for i, d := range devs {
		t.Logf("device %d: %v (%s, %d threads/block, warp %d, %d KiB smem/SM, %d-bit bus)",
			i, d, d.Arch(), d.MaxThreadsPerBlock, d.WarpSize, d.SharedPerSM>>10, d.MemoryBusWidth)
		if d.Ordinal != i || d.Name == "" || d.SMs <= 0 || d.TotalMemory == 0 || d.L2Bytes <= 0 ||
			d.Major < 3 || d.WarpSize != 32 || d.MaxThreadsPerBlock < 512 ||
			d.SharedPerBlock <= 0 || d.SharedPerBlockOptin < d.SharedPerBlock {
			t.Errorf("implausible device %d: %+v", i, d)
		}
		if d.Major < 8 {
			t.Logf("device %d is %s: the fatbin has SASS for sm_80..sm_90 and PTX for compute_90 only", i, d.Arch())
		}
	}
	c := gpuContext(t)
	if got := c.Device(); got != devs[0] {
		t.Errorf("Context.Device() = %+v, Devices()[0] = %+v", got, devs[0])
	}
}
