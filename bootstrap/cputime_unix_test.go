//go:build unix

package bootstrap

import (
	"syscall"
	"time"
)

// processCPUTime returns the user+system CPU time of the whole process. On a
// shared machine it is a steadier measure of work than wall time: time
// stolen by other processes does not count.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
