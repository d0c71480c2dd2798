package kernels

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
)

// fakeNTT runs a negacyclic NTT launch of the fake driver (butterfly,
// hybrid or matrix, forward or inverse) with a CPU plan: every plan of a
// size shares one NTT-domain layout (smallntt), so the CPU's butterfly plan
// gives the kernels' outputs bit for bit. The twiddle tables passed must be
// those of the plan the kernel stands for (smallntt.Plan.ButterflyTables,
// StageTables), so that a wrong table fails here as it would on a GPU. ok
// is false for a kernel name it does not run (the cyclic matrix
// transforms and the small ones are not emulated: their launches fail).
func (g *fakeGPU) fakeNTT(name string, a []uintptr, words func(p, n uint64) []uint64) (r Result, ok bool) {
	inverse := strings.Contains(name, "_inv")
	pick := func(fwd, inv []uint64) []uint64 {
		if inverse {
			return inv
		}
		return fwd
	}
	check := func(table uint64, want []uint64, what string) {
		if !slices.Equal(words(table, uint64(len(want))), want) {
			panic("fake " + name + ": " + what + " is not the plan's")
		}
	}
	params := func(count int) []unsafe.Pointer { return unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), count) }
	var n int
	var data []unsafe.Pointer // data, batch, …
	switch {
	case name == "goldfhe_ntt_butterfly_fwd" || name == "goldfhe_ntt_butterfly_inv":
		data = params(4) // data, batch, n, table
		n = int(*(*int32)(data[2]))
		check(*(*uint64)(data[3]), pick(g.plan(n, smallntt.Butterfly).ButterflyTables()), "the butterfly table")
	case strings.HasPrefix(name, "goldfhe_ntt_hybrid_"):
		var f1, f2 int
		if _, err := fmt.Sscanf(name[len("goldfhe_ntt_hybrid_fwd_"):], "%dx%d", &f1, &f2); err != nil {
			return 400, true
		}
		data, n = params(3), f1*f2 // data, batch, table
		st := g.plan(n, smallntt.Hybrid, f1, f2).StageTables()[0]
		check(*(*uint64)(data[2]), pick(st.Twiddle, st.TwiddleInv), "the stage-1 table")
	case name == "goldfhe_ntt_matrix_fwd" || name == "goldfhe_ntt_matrix_inv":
		data = params(3) // data, batch, desc
		d := (*nttDescC)(data[2])
		if d.negacyclic == 0 {
			return 400, true
		}
		n = int(d.n)
		factors := make([]int, d.nstages)
		for i := range factors {
			factors[i] = int(d.st[i].f)
		}
		v := smallntt.MatrixNoMerge
		if d.merge != 0 {
			v = smallntt.Matrix
		}
		for i, st := range g.plan(n, v, factors...).StageTables() {
			if st.T > 1 {
				check(uint64(d.st[i].tw), pick(st.Twiddle, st.TwiddleInv), fmt.Sprintf("stage %d's table", i+1))
			}
		}
	default:
		return 0, false
	}
	batch := int(*(*int32)(data[1]))
	ref := g.plan(n, smallntt.Butterfly)
	polys := words(*(*uint64)(data[0]), uint64(batch*n))
	// The kernels take canonical words (gpuntt.Plan.Forward) and give a
	// wrong result for others, where the CPU plan here would reduce them.
	if i := slices.IndexFunc(polys, func(x uint64) bool { return x >= smallntt.P }); i >= 0 {
		panic(fmt.Sprintf("fake %s: word %d of the batch is %#x, not below p: the kernels take canonical words", name, i, polys[i]))
	}
	for i := range batch {
		p := polys[i*n : (i+1)*n]
		if inverse {
			ref.Inverse(p, p)
		} else {
			ref.Forward(p, p)
		}
	}
	return 0, true
}

// plan returns the smallntt plan of n, v and factors, built once.
func (g *fakeGPU) plan(n int, v smallntt.Variant, factors ...int) *smallntt.Plan {
	key := fmt.Sprint(n, v, factors)
	if p, ok := g.plans[key]; ok {
		return p
	}
	p, err := smallntt.NewPlan(n, v, factors...)
	if err != nil {
		panic(fmt.Sprintf("fake: no plan %s: %v", key, err))
	}
	if g.plans == nil {
		g.plans = map[string]*smallntt.Plan{}
	}
	g.plans[key] = p
	return p
}
