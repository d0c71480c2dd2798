//go:build !(linux && (amd64 || arm64))

package gpumon

import (
	"fmt"
	"runtime"
)

func openNVML(string, int) (source, string, float64, error) {
	return nil, "", 0, fmt.Errorf("gpumon: NVML is not reached on %s/%s (purego's dlopen: linux/amd64 and linux/arm64 only)", runtime.GOOS, runtime.GOARCH)
}
