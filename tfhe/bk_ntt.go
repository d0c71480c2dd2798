package tfhe

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/goldfhe/goldfhe/smallntt"
)

// NTTBootstrappingKey is a bootstrapping key with every polynomial in the NTT
// domain of one plan: the form blind rotation consumes. Get one from
// BootstrappingKey.NTT. It is immutable and safe for concurrent use; it must
// only meet data transformed with its plan (or one with the same Order).
type NTTBootstrappingKey struct {
	params Params
	plan   *smallntt.Plan
	d      *nttData
}

// nttData is the shared storage of the NTT forms of one bootstrapping key
// for one NTT-domain order; the cache of BootstrappingKey holds it weakly.
type nttData struct {
	data     []uint64 // samples × (k+1)·l × (k+1) × N
	trgsw    []NTTTRGSW
	grouping int
}

type nttCacheEntry struct {
	wp weak.Pointer[nttData]
}

// Params returns the key's parameter set.
func (k *NTTBootstrappingKey) Params() Params { return k.params }

// Plan returns the plan whose NTT domain the key is in.
func (k *NTTBootstrappingKey) Plan() *smallntt.Plan { return k.plan }

// Len returns the number of TRGSW samples (BootstrappingKey.Len).
func (k *NTTBootstrappingKey) Len() int { return len(k.d.trgsw) }

// Grouping returns the key's grouping factor (BootstrappingKey.Grouping).
func (k *NTTBootstrappingKey) Grouping() int { return k.d.grouping }

// TRGSW returns sample i in the NTT domain (aliasing the key: do not modify).
func (k *NTTBootstrappingKey) TRGSW(i int) *NTTTRGSW { return &k.d.trgsw[i] }

// Data returns the whole key as one slice (aliasing it: do not modify), laid
// out as [i][r][c][j]: TRGSW i < Len(), row r < (k+1)·l, column c ≤ k,
// NTT-domain position j < N. This is the layout an accelerator uploads.
func (k *NTTBootstrappingKey) Data() []uint64 { return k.d.data }

// orderDigest identifies an NTT domain: plans of one N share ψ
// (smallntt.Psi), so equal Order() means equal transforms.
func orderDigest(plan *smallntt.Plan) [32]byte {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(plan.N()))
	h.Write(b[:])
	for _, o := range plan.Order() {
		binary.LittleEndian.PutUint64(b[:], uint64(o))
		h.Write(b[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// NTT returns the key transformed with plan. Transforms are computed on all
// cores and cached per NTT-domain order for as long as some returned
// NTTBootstrappingKey is reachable (the cache holds them weakly), so engines
// sharing a key and an order share one copy — TFHELib128's is 62 MB.
func (bk *BootstrappingKey) NTT(plan *smallntt.Plan) (*NTTBootstrappingKey, error) {
	if bk == nil {
		return nil, errors.New("tfhe: BootstrappingKey.NTT: nil key")
	}
	if err := bk.check(bk.params); err != nil {
		return nil, err
	}
	if plan == nil {
		return nil, errors.New("tfhe: BootstrappingKey.NTT: nil plan")
	}
	if plan.N() != bk.params.PolyDegree() {
		return nil, fmt.Errorf("tfhe: BootstrappingKey.NTT: plan %v has N=%d, the key N=%d", plan, plan.N(), bk.params.PolyDegree())
	}
	key := orderDigest(plan)
	bk.mu.Lock()
	defer bk.mu.Unlock()
	if e := bk.cache[key]; e != nil {
		if d := e.wp.Value(); d != nil {
			return &NTTBootstrappingKey{params: bk.params, plan: plan, d: d}, nil
		}
	}
	d := bk.transform(plan)
	if bk.cache == nil {
		bk.cache = make(map[[32]byte]*nttCacheEntry)
	}
	bk.cache[key] = &nttCacheEntry{wp: weak.Make(d)}
	return &NTTBootstrappingKey{params: bk.params, plan: plan, d: d}, nil
}

func (bk *BootstrappingKey) transform(plan *smallntt.Plan) *nttData {
	p := bk.params
	n, k, l, N := len(bk.rows), p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	per := (k + 1) * l * (k + 1) * N
	d := &nttData{data: make([]uint64, n*per), trgsw: make([]NTTTRGSW, n), grouping: bk.grouping}
	for i := range d.trgsw {
		d.trgsw[i] = NTTTRGSW{plan: plan, k: k, l: l, n: N, data: d.data[i*per : (i+1)*per : (i+1)*per]}
	}
	parallelFor(n, func() struct{} { return struct{}{} }, func(_ struct{}, i int) {
		d.trgsw[i].fill(&bk.rows[i])
	})
	return d
}

// parallelFor runs body(state, i) for every i < count on GOMAXPROCS
// goroutines, each with its own state from newState. Which goroutine runs
// which i varies; callers make body's result depend on i only.
func parallelFor[S any](count int, newState func() S, body func(st S, i int)) {
	w := min(runtime.GOMAXPROCS(0), count)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			st := newState()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				body(st, i)
			}
		})
	}
	wg.Wait()
}
