package kernels

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"
)

// Stream is a CUDA stream: work enqueued on it runs in order, concurrently
// with other streams. A nil *Stream, wherever one is accepted, means the
// context's legacy default stream; streams made here (flag
// CU_STREAM_DEFAULT) synchronise with it, so a synchronous copy (which runs
// on the default stream) waits for the kernels already enqueued on them.
type Stream struct {
	c *Context
	h atomic.Uintptr // CUstream; 0 once closed
}

// NewStream creates a stream (cuStreamCreate). Close it when done.
func (c *Context) NewStream() (*Stream, error) {
	var h uintptr
	if err := c.do("cuStreamCreate", symStreamCreate, uintptr(unsafe.Pointer(&h)), 0); err != nil {
		return nil, err
	}
	s := &Stream{c: c}
	s.h.Store(h)
	c.streams.Add(1)
	return s, nil
}

func (s *Stream) handle(op string) (uintptr, error) {
	h := s.h.Load()
	if h == 0 {
		return 0, fmt.Errorf("kernels: %s: Stream %w", op, shortClosed)
	}
	return h, nil
}

// Synchronize waits until all work enqueued on s is done and returns the
// first error it raised (cuStreamSynchronize).
func (s *Stream) Synchronize() error {
	h, err := s.handle("Stream.Synchronize")
	if err != nil {
		return err
	}
	return s.c.do("cuStreamSynchronize", symStreamSynchronize, h)
}

// WaitEvent makes work enqueued on s after this call wait until e has
// completed (cuStreamWaitEvent), without blocking the host.
func (s *Stream) WaitEvent(e *Event) error {
	const op = "Stream.WaitEvent"
	h, err := s.handle(op)
	if err != nil {
		return err
	}
	if e.c != s.c {
		return argErr(op, "event belongs to another Context")
	}
	eh, err := e.handle(op)
	if err != nil {
		return err
	}
	return s.c.do("cuStreamWaitEvent", symStreamWaitEvent, h, eh, 0)
}

// Close destroys the stream once its pending work is done
// (cuStreamDestroy_v2). A second Close is a no-op. It must not run beside
// other use of s (package doc, "Threading and contexts").
func (s *Stream) Close() error {
	h := s.h.Swap(0)
	if h == 0 {
		return nil
	}
	s.c.streams.Add(-1)
	return s.c.do("cuStreamDestroy_v2", symStreamDestroy, h)
}

// Event is a CUDA event: a marker recorded into a stream, for waiting and
// for timing GPU work.
type Event struct {
	c *Context
	h atomic.Uintptr // CUevent; 0 once closed
}

// NewEvent creates an event with timing enabled (cuEventCreate,
// CU_EVENT_DEFAULT). Close it when done.
func (c *Context) NewEvent() (*Event, error) {
	var h uintptr
	if err := c.do("cuEventCreate", symEventCreate, uintptr(unsafe.Pointer(&h)), 0); err != nil {
		return nil, err
	}
	e := &Event{c: c}
	e.h.Store(h)
	c.events.Add(1)
	return e, nil
}

func (e *Event) handle(op string) (uintptr, error) {
	h := e.h.Load()
	if h == 0 {
		return 0, fmt.Errorf("kernels: %s: Event %w", op, shortClosed)
	}
	return h, nil
}

// Record enqueues the event on s (nil: the default stream)
// (cuEventRecord).
func (e *Event) Record(s *Stream) error {
	const op = "Event.Record"
	h, err := e.handle(op)
	if err != nil {
		return err
	}
	sh, err := streamHandle(op, e.c, s)
	if err != nil {
		return err
	}
	return e.c.do("cuEventRecord", symEventRecord, h, sh)
}

// Synchronize waits until the work before the event's last Record is done
// (cuEventSynchronize).
func (e *Event) Synchronize() error {
	h, err := e.handle("Event.Synchronize")
	if err != nil {
		return err
	}
	return e.c.do("cuEventSynchronize", symEventSynchronize, h)
}

// Done reports whether the work before the event's last Record is done,
// without waiting (cuEventQuery).
func (e *Event) Done() (bool, error) {
	const op = "cuEventQuery"
	h, err := e.handle("Event.Done")
	if err != nil {
		return false, err
	}
	if err := e.c.enter(op); err != nil {
		return false, err
	}
	defer e.c.exit()
	r := e.c.d.call(symEventQuery, h)
	if r == resultNotReady {
		return false, nil
	}
	return r == resultSuccess, e.c.check(op, r)
}

// Close destroys the event (cuEventDestroy_v2). A second Close is a no-op.
// It must not run beside other use of e (package doc, "Threading and contexts").
func (e *Event) Close() error {
	h := e.h.Swap(0)
	if h == 0 {
		return nil
	}
	e.c.events.Add(-1)
	return e.c.do("cuEventDestroy_v2", symEventDestroy, h)
}

// ElapsedTime returns the GPU time between two recorded, completed events
// (cuEventElapsedTime, resolution about half a microsecond).
func ElapsedTime(start, end *Event) (time.Duration, error) {
	const op = "ElapsedTime"
	sh, err := start.handle(op)
	if err != nil {
		return 0, err
	}
	if end.c != start.c {
		return 0, argErr(op, "the events belong to different Contexts")
	}
	eh, err := end.handle(op)
	if err != nil {
		return 0, err
	}
	var ms float32
	if err := start.c.do("cuEventElapsedTime", symEventElapsedTime, uintptr(unsafe.Pointer(&ms)), sh, eh); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}
