package tfhe

import (
	"fmt"
	"sync"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// internalPlans caches, per N, the plan used where the choice of transform
// cannot show: key generation, encryption and decryption products, which are
// exact whatever the plan (DESIGN.md §3): smallntt.DefaultPlan, the fastest.
var internalPlans sync.Map // int → *smallntt.Plan

func internalPlan(n int) *smallntt.Plan {
	if p, ok := internalPlans.Load(n); ok {
		return p.(*smallntt.Plan)
	}
	p, err := smallntt.DefaultPlan(n)
	if err != nil {
		panic(fmt.Sprintf("tfhe: no NTT plan for a validated N=%d: %v", n, err))
	}
	actual, _ := internalPlans.LoadOrStore(n, p)
	return actual.(*smallntt.Plan)
}

// nttScratch holds the buffers of one integer-by-torus polynomial product
// through the NTT (encryption, decryption, key generation).
type nttScratch struct {
	plan *smallntt.Plan
	a    smallntt.NTTPoly
	acc  smallntt.NTTPoly
}

func newNTTScratch(n int) *nttScratch {
	return &nttScratch{plan: internalPlan(n), a: make(smallntt.NTTPoly, n), acc: make(smallntt.NTTPoly, n)}
}

// keyNTT transforms binary (or small integer) key polynomials.
func keyNTT(plan *smallntt.Plan, keys [][]int32) []smallntt.NTTPoly {
	out := make([]smallntt.NTTPoly, len(keys))
	for j, s := range keys {
		out[j] = make(smallntt.NTTPoly, len(s))
		for i, x := range s {
			out[j][i] = smallntt.FromInt64(int64(x))
		}
		plan.Forward(out[j], smallntt.Poly(out[j]))
	}
	return out
}

// dotKey sets dst = Σ_j a_j·s_j mod X^N+1 exactly (a_j torus polynomials
// read as int32, s_j binary key polynomials in NTT form): each coefficient is
// at most k·N·2^31 < 2^47 in absolute value, far below p/2.
func (sc *nttScratch) dotKey(dst torus.Poly, a []torus.Poly, sNTT []smallntt.NTTPoly) {
	clear(sc.acc)
	for j := range a {
		for i, x := range a[j] {
			sc.a[i] = smallntt.FromInt64(int64(int32(x)))
		}
		sc.plan.Forward(sc.a, smallntt.Poly(sc.a))
		sc.plan.MulAdd(sc.acc, sc.a, sNTT[j])
	}
	sc.plan.Inverse(smallntt.Poly(sc.acc), sc.acc)
	for i, v := range sc.acc {
		dst[i] = torus.Torus32(smallntt.ToInt64Centered(v))
	}
}
