//go:build !linux

package kernels

// fakeThreads: elsewhere (where there is no driver to fake anyway) the
// fake driver keeps one context stack for every thread. Pushes and pops
// still pair up, but the tests of what is current on one thread skip.
const fakeThreads = false

func fakeThread() int { return 0 }
