package kernels

import (
	"errors"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOperandsOfAnotherContext: buffers, streams, events and pinned memory
// are used with the Context that made them. Two Contexts of one device
// share its primary context, so a buffer of a closed Context could
// otherwise reach the driver through an open one after the driver freed
// it (the fake, like the driver, hands the reopened primary context the
// same handle).
func TestOperandsOfAnotherContext(t *testing.T) {
	requireFake64(t)
	g := newFakeGPU()
	d := &driver{path: "fake", fake: g.call}
	c1, err := open(d, 0)
	require.NoError(t, err)
	buf1, _ := Alloc[uint64](c1, 16)
	s1, _ := c1.NewStream()
	ev1, _ := c1.NewEvent()
	pin1, _ := AllocHost[uint64](c1, 16)
	require.NoError(t, c1.Close())
	c2, err := open(d, 0)
	require.NoError(t, err)
	defer c2.Close()
	if c2.h != c1.h {
		t.Fatalf("the fake gave the reopened primary context another handle (%#x, %#x)", c2.h, c1.h)
	}
	l2, err := c2.loadLibrary(fakeImage, "fake")
	require.NoError(t, err)
	defer l2.Close()
	buf2, _ := Alloc[uint64](c2, 16)
	defer buf2.Free()
	s2, _ := c2.NewStream()
	defer s2.Close()
	pin2, _ := AllocHost[uint64](c2, 16)
	defer pin2.Free()
	tab2, _ := Alloc[uint64](c2, 8)
	defer tab2.Free()

	n0 := len(g.launches)
	for _, tc := range []struct {
		what string
		err  error
	}{
		{"Mul on a closed Context's buffer", l2.Mul(nil, Vecs{Buf: buf1}, Vecs{Buf: buf2}, Vecs{Buf: buf2}, 16, 1)},
		{"Mul on a closed Context's stream", l2.Mul(s1, Vecs{Buf: buf2}, Vecs{Buf: buf2}, Vecs{Buf: buf2}, 16, 1)},
		{"FieldOps on a closed Context's buffer", l2.FieldOps(nil, buf1, buf2.View(0, 8), buf2.View(8, 16))},
		{"NTTButterfly on a closed Context's buffer", l2.NTTButterfly(nil, buf1, 2, 8, tab2, false)},
		{"async copy from a closed Context's pinned memory", buf2.CopyFromHostAsync(pin1, s2)},
		{"async copy into a closed Context's pinned memory", buf2.CopyToHostAsync(pin1, s2)},
		{"device copy from a closed Context's buffer", buf2.CopyFrom(buf1)},
		{"wait on a closed Context's event", s2.WaitEvent(ev1)},
	} {
		if !errors.Is(tc.err, ErrArgument) {
			t.Errorf("%s: %v, want ErrArgument", tc.what, tc.err)
		}
	}
	if n := len(g.launches) - n0; n != 0 {
		t.Errorf("%d launches with operands of a closed Context", n)
	}
	// The same buffers of c2 work.
	assert.NoError(t, l2.Mul(s2, Vecs{Buf: buf2}, Vecs{Buf: buf2}, Vecs{Buf: buf2}, 16, 1), "Mul on c2's own buffers")
	assert.NoError(t, buf2.CopyFromHostAsync(pin2, s2), "async copy on c2's own buffers")

	// Pinned memory's Slice after its Context's Close would hand out host
	// memory the driver unmaps with the primary context.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("HostPinned.Slice after its Context's Close did not panic")
			}
		}()
		_ = pin1.Slice()
	}()
	_ = pin2.Slice() // an open Context's: no panic

	// An open Context's buffer is refused by another open Context too.
	c3, err := open(d, 0)
	require.NoError(t, err)
	defer c3.Close()
	buf3, _ := Alloc[uint64](c3, 16)
	defer buf3.Free()
	if err := l2.Mul(nil, Vecs{Buf: buf3}, Vecs{Buf: buf2}, Vecs{Buf: buf2}, 16, 1); !errors.Is(err, ErrArgument) {
		t.Errorf("Mul on another open Context's buffer: %v, want ErrArgument", err)
	}
}

// TestViewOfWholeBuffer: a View spanning its whole buffer is still a view,
// so its Free is refused and the buffer's own Free releases the memory.
func TestViewOfWholeBuffer(t *testing.T) {
	g, c, _ := newFake(t)
	b, err := Alloc[uint64](c, 8)
	require.NoError(t, err)
	v := b.View(0, 8)
	if !v.IsView() || b.IsView() {
		t.Errorf("IsView: view %v, buffer %v", v.IsView(), b.IsView())
	}
	if err := v.Free(); !errors.Is(err, ErrArgument) {
		t.Errorf("Free of a whole-buffer view: %v, want ErrArgument", err)
	}
	assert.NoError(t, b.Free(), "Free of the buffer after its view's refused Free")
	if n := len(g.dev); n != 0 {
		t.Errorf("%d device allocations left", n)
	}
}

// TestFieldOpsEmpty: no pairs is no launch, as for every other kernel.
func TestFieldOpsEmpty(t *testing.T) {
	g, c, l := newFake(t)
	b, err := Alloc[uint64](c, 8)
	require.NoError(t, err)
	defer b.Free()
	n0 := len(g.launches)
	assert.NoError(t, l.FieldOps(nil, b.View(0, 0), b.View(0, 0), b.View(0, 0)), "FieldOps on empty buffers")
	if len(g.launches) != n0 {
		t.Error("FieldOps on empty buffers launched a kernel")
	}
}

// TestButterflySizes: NTTButterfly takes the sizes smallntt has tables for
// (up to 4096, whose block fits the default 48 KiB of shared memory) and
// refuses 8192, which it once accepted and could never launch.
func TestButterflySizes(t *testing.T) {
	g, c, l := newFake(t)
	if maxButterflyN != smallntt.Sizes[len(smallntt.Sizes)-1] {
		t.Errorf("maxButterflyN %d, smallntt's largest size %d", maxButterflyN, smallntt.Sizes[len(smallntt.Sizes)-1])
	}
	for _, k := range []*nttKernel{&l.ntt.butterflyFwd, &l.ntt.butterflyInv} {
		if !g.sharedFits(k.f.h, uint32(maxButterflyN*8)) {
			t.Errorf("%s: %d bytes of shared memory do not fit its limit", k.f.name, maxButterflyN*8)
		}
	}
	data, _ := Alloc[uint64](c, 8192)
	defer data.Free()
	if err := l.NTTButterfly(nil, data, 1, 8192, data, false); !errors.Is(err, ErrArgument) {
		t.Errorf("NTTButterfly(N = 8192): %v, want ErrArgument", err)
	}
}

// TestOptionalKernelLookupErrors: a kernel the fatbin lacks is left out,
// but any other failure to look one up is BootstrapKernels' error, not a
// kernel silently missing (a transient out-of-memory used to drop the
// tensor-core key switching without a word).
func TestOptionalKernelLookupErrors(t *testing.T) {
	f := UseFakeDriver(t, FakeOptions{})
	c, err := Open(0)
	require.NoError(t, err)
	defer c.Close()
	l, err := c.LoadLibrary()
	require.NoError(t, err)
	defer l.Close()
	if _, err := l.BootstrapKernels(); err != nil {
		t.Fatal(err)
	}
	lookups := 0
	for ; ; lookups++ {
		f.FailAfter(t, "cuModuleGetFunction", lookups, int32(resultOutOfMemory))
		_, err := l.BootstrapKernels()
		f.mu.Lock()
		_, unused := f.failAt[symModuleGetFunction]
		delete(f.failAt, symModuleGetFunction)
		f.mu.Unlock()
		if unused {
			break // BootstrapKernels makes fewer lookups
		}
		if !errors.Is(err, ErrOutOfMemory) {
			t.Errorf("lookup %d failing with out of memory: BootstrapKernels gave %v", lookups, err)
		}
	}
	if lookups < 10 {
		t.Errorf("only %d lookups tried", lookups)
	}
	if _, err := l.BootstrapKernels(); err != nil {
		t.Errorf("BootstrapKernels after the failures: %v", err)
	}
}
