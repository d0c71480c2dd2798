package bootstrap

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Merging concurrent calls. The GPU runs one call at a time (its device
// pipeline), and a small call leaves most of it idle: TFHELib128 grouped by
// 3 runs 18,134 gates/s in calls of 64 and 39,929 in calls of 16,384 on an
// H100 (BENCHMARKS.md). Goroutines that each evaluate their own gates or
// circuit (a server answering several clients, say) make many small calls.
//
// A call of at most mergeCallMax samples that finds the pipeline busy, or
// free but with calls queued, queues itself and waits for either its
// result or the pipeline. Whichever queued call gets the pipeline takes
// calls from the head of the queue (while they total at most mergedMax
// samples, and at least one), runs those of the same kind and μ as one
// batch, in the order of their first call, writes each caller's outputs
// where it asked and hands each its result; it goes on until its own call
// has run. A waiter whose call has run returns at once, without the
// pipeline. A small call that finds the pipeline free and nobody queued
// runs at once, alone, as do larger calls, so a lone caller's latency is
// what it was.
const (
	// mergeCallMax is the largest call that is merged: larger ones already
	// run near the GPU's full rate (38,807 gates/s at 4,096 on an H100).
	mergeCallMax = 4096
	// mergedMax bounds the samples a holder takes from the queue at once
	// (all kinds together); calls behind them run in its next round, or
	// by the next holder.
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

// mergeReqs recycles answered requests (their channels drained), so that
// a merged call allocates nothing.
var mergeReqs = sync.Pool{New: func() any { return &mergeReq{done: make(chan error, 1)} }}

// mergeBufs is the merged batches' working memory, reused: the pipeline's
// holder's only.
type mergeBufs struct {
	reqs    []*mergeReq
	out, in []*tfhe.TLWE
}

// The pipeline is a one-slot semaphore rather than a mutex, so that a
// queued call can wait for its result and for the pipeline at once.
func (e *gpuCore) lockPipe()   { e.pipe <- struct{}{} }
func (e *gpuCore) unlockPipe() { <-e.pipe }
func (e *gpuCore) tryLockPipe() bool {
	select {
	case e.pipe <- struct{}{}:
		return true
	default:
		return false
	}
}

// queued reports whether calls wait in the queue.
func (e *gpuCore) queued() bool {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	return len(e.queue) > 0
}

// mergeCall queues the call and waits for its result or the pipeline
// (holding says the caller holds it already); holding the pipeline, it
// runs queued calls until its own has run. The caller holds e.mu for
// reading.
func (e *gpuCore) mergeCall(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32, holding bool) error {
	r := mergeReqs.Get().(*mergeReq)
	r.op, r.mu, r.out, r.in = op, mu, out, in
	answered := false
	// One deferred function, so that the order is fixed: r leaves the
	// queue before the pipeline is released.
	defer func() {
		if !answered {
			// A panic went through: r must not run after its caller has
			// gone. Either it is still queued (a round that panicked took
			// calls ahead of it), or that round answered it; in neither
			// case is it reused. It leaves the queue while this call still
			// holds the pipeline, if it does, so that no next holder can
			// take it.
			e.qmu.Lock()
			if i := slices.Index(e.queue, r); i >= 0 {
				e.queue = slices.Delete(e.queue, i, i+1)
			}
			e.qmu.Unlock()
		} else {
			r.out, r.in = nil, nil // the caller's samples are not kept
			mergeReqs.Put(r)
		}
		if holding {
			e.unlockPipe()
		}
	}()
	e.qmu.Lock()
	e.queue = append(e.queue, r)
	e.qmu.Unlock()
	if !holding {
		select {
		case err := <-r.done:
			answered = true
			return err
		case e.pipe <- struct{}{}:
			holding = true
		}
	}
	for {
		select {
		case err := <-r.done:
			answered = true
			return err
		default:
		}
		if !e.runQueued() {
			// Unreachable: an unanswered request is in the queue, and only
			// the pipeline's holder takes from it. Fail rather than spin.
			return errors.New("bootstrap: GPU: a merged call was lost (a bug; please report it)")
		}
	}
}

// runQueued takes calls from the head of the queue while they total at
// most mergedMax samples (at least one), runs each group of the same kind
// and μ, in the order of its first call, as one call, and answers every
// call taken. It reports whether it took any. The caller holds the
// pipeline. Should a run panic, the calls taken and not yet answered get
// an error before the panic goes on, so that their callers do not wait for
// ever.
func (e *gpuCore) runQueued() bool {
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
	if take == 0 {
		return false
	}
	defer func() {
		// The callers' samples are not kept: an earlier, larger group's
		// lie past the last group's length.
		clear(b.out[:cap(b.out)])
		clear(b.in[:cap(b.in)])
		if p := recover(); p != nil {
			for i, q := range b.reqs {
				if q != nil {
					q.done <- fmt.Errorf("bootstrap: GPU: a merged batch panicked: %v", p)
					b.reqs[i] = nil
				}
			}
			panic(p)
		}
	}()
	for i, r := range b.reqs {
		if r == nil {
			continue // run with an earlier group
		}
		// The group's kind and μ, read before any answer: an answered
		// request goes back to the pool, and another call may reuse it
		// while this loop still runs.
		op, mu := r.op, r.mu
		b.out, b.in = append(b.out[:0], r.out...), append(b.in[:0], r.in...)
		for _, q := range b.reqs[i+1:] {
			if q != nil && q.op == op && q.mu == mu {
				b.out, b.in = append(b.out, q.out...), append(b.in, q.in...)
			}
		}
		err := e.runPasses(op, b.out, b.in, mu)
		// Answer the group from its last request back to r, whose fields
		// are not read again once it is answered.
		calls := 0
		for j := len(b.reqs) - 1; j >= i; j-- {
			if q := b.reqs[j]; q != nil && (j == i || q.op == op && q.mu == mu) {
				b.reqs[j] = nil
				q.done <- err
				calls++
			}
		}
		if calls > 1 {
			e.mergedCalls.Add(int64(calls))
		}
	}
	return true
}
