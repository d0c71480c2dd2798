package kernels

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDevices enumerates the GPUs (skipped, with the reason, without any).
func TestDevices(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		skipOrFail(t, err)
	}
	devs, err := Devices()
	require.NoError(t, err)
	if len(devs) != n || n == 0 {
		t.Fatalf("%d devices listed, DeviceCount %d", len(devs), n)
	}
	for i, d := range devs {
		t.Logf("device %d: %v (%s, %s, %d threads/block, warp %d, %d KiB smem/SM, %d-bit bus)",
			i, d, d.UUID, d.Arch(), d.MaxThreadsPerBlock, d.WarpSize, d.SharedPerSM>>10, d.MemoryBusWidth)
		if !uuidForm.MatchString(d.UUID) || i > 0 && d.UUID == devs[0].UUID {
			t.Errorf("device %d: UUID %q, not nvidia-smi's form or not its own", i, d.UUID)
		}
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

// uuidForm is how nvidia-smi -L writes a GPU's UUID.
var uuidForm = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestFormatUUID(t *testing.T) {
	u := [16]byte{0xcf, 0x74, 0xaf, 0x0c, 0x8d, 0xad, 0xea, 0xa9, 0x2d, 0x08, 0x55, 0xfd, 0xc5, 0xe8, 0xd0, 0x99}
	if got, want := formatUUID(u), "GPU-cf74af0c-8dad-eaa9-2d08-55fdc5e8d099"; got != want {
		t.Errorf("formatUUID = %q, want %q", got, want)
	}
}
