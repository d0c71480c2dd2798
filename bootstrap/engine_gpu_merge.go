package bootstrap

import (
	"slices"
	"sync"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Merging concurrent calls. The GPU runs one call at a time (its device
// pipeline), and a small call leaves most of it idle: TFHELib128 grouped by
// 3 runs 18,134 gates/s in calls of 64 and 39,929 in calls of 16,384 on an
// H100 (BENCHMARKS.md). Goroutines that each evaluate their own gates or
// circuit (a server answering several clients, say) make many small
// calls. A call of at most mergeCallMax samples that finds the pipeline
// busy is queued, and whichever queued call gets the pipeline next runs
// every queued call of the same kind and μ as one batch (up to
// mergedMax samples), outputs written where each caller asked, then hands
// each its result; the others find theirs done. A call that finds the
// pipeline free runs at once, as before, so a lone caller's latency is
// unchanged.
const (
	// mergeCallMax is the largest call that is merged: larger ones already
	// run near the GPU's full rate (38,807 gates/s at 4,096 on an H100).
	mergeCallMax = 4096
	// mergedMax bounds a merged batch, so that a call queued behind a
	// crowd waits for at most about one batch of the full rate's size.
	mergedMax = 16384
)

// mergeReq is one queued call: its arguments, and done, which receives
// its result once, from the call that runs it.
type mergeReq struct {
	op      opKind
	mu      torus.Torus32
	out, in []*tfhe.TLWE
	done    chan error
}

// mergeReqs recycles requests (their channels empty), so that a merged
// call allocates nothing.
var mergeReqs = sync.Pool{New: func() any { return &mergeReq{done: make(chan error, 1)} }}

// mergeBufs is the merged batches' working memory, reused: the pipeline's
// holder's only.
type mergeBufs struct {
	reqs    []*mergeReq
	out, in []*tfhe.TLWE
}

// mergeCall queues the call and waits for the pipeline; holding it, it
// runs queued calls (its own among them, unless an earlier holder ran it)
// until its own has run. The caller holds e.mu for reading.
func (e *GPU) mergeCall(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	r := mergeReqs.Get().(*mergeReq)
	r.op, r.mu, r.out, r.in = op, mu, out, in
	defer func() {
		r.out, r.in = nil, nil // the caller's samples are not kept
		mergeReqs.Put(r)
	}()
	e.qmu.Lock()
	e.queue = append(e.queue, r)
	e.qmu.Unlock()
	e.pipe.Lock()
	defer e.pipe.Unlock()
	for {
		select {
		case err := <-r.done:
			return err
		default:
		}
		e.runQueued()
	}
}

// runQueued takes the queued calls from the head of the queue while they
// fit mergedMax (at least one), and runs each group of the same kind and
// μ, in the order of their first call, as one call. The caller holds the
// pipeline.
func (e *GPU) runQueued() {
	e.qmu.Lock()
	take, total := 0, 0
	for take < len(e.queue) && (take == 0 || total+len(e.queue[take].in) <= mergedMax) {
		total += len(e.queue[take].in)
		take++
	}
	b := &e.merged
	b.reqs = append(b.reqs[:0], e.queue[:take]...)
	e.queue = slices.Delete(e.queue, 0, take) // zeroes the vacated tail
	e.qmu.Unlock()

	for i, r := range b.reqs {
		if r == nil {
			continue // run with an earlier group
		}
		b.out, b.in = append(b.out[:0], r.out...), append(b.in[:0], r.in...)
		for _, q := range b.reqs[i+1:] {
			if q != nil && q.op == r.op && q.mu == r.mu {
				b.out, b.in = append(b.out, q.out...), append(b.in, q.in...)
			}
		}
		err := e.runPasses(r.op, b.out, b.in, r.mu)
		calls := 0
		for j, q := range b.reqs[i:] {
			if q != nil && q.op == r.op && q.mu == r.mu {
				q.done <- err
				b.reqs[i+j] = nil
				calls++
			}
		}
		if calls > 1 {
			e.mergedCalls.Add(int64(calls))
		}
	}
	clear(b.out)
	clear(b.in)
}
