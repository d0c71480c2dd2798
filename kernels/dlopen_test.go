package kernels

import (
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestDlopenErrorNamesCause: a failed dlopen's error carries dlerror's
// message. dlerror is per OS thread, so a goroutine that moved to another
// thread between the two calls read an empty one ("libcuda.so.1 not found
// ()" in bootstrap.New's Reason, now and then).
func TestDlopenErrorNamesCause(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("dlopen through purego is used on linux/amd64 and linux/arm64 only")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	empty := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, err := dlopen("/nonexistent/goldfhe-test/libnone.so.1")
				if err == nil || !strings.Contains(err.Error(), "libnone") {
					mu.Lock()
					empty++
					mu.Unlock()
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	if empty > 0 {
		t.Errorf("%d of 1600 failed dlopen calls gave no dlerror message", empty)
	}
}
