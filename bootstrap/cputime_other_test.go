//go:build !unix

package bootstrap

import "time"

// processCPUTime is unavailable here; benchmarks then report 0 cpu-ms.
func processCPUTime() time.Duration { return 0 }
