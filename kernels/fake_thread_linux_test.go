package kernels

import "syscall"

// fakeThreads: the fake driver tells OS threads apart, as CUDA does for
// current contexts.
const fakeThreads = true

// fakeThread identifies the calling OS thread (gettid).
func fakeThread() int { return syscall.Gettid() }
