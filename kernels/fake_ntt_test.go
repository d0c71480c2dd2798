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
	var n, nparams int
	var want []uint64 // the table argument's expected contents
	var plan *smallntt.Plan
	switch {
	case name == "goldfhe_ntt_butterfly_fwd" || name == "goldfhe_ntt_butterfly_inv":
		nparams = 4
	case strings.HasPrefix(name, "goldfhe_ntt_hybrid_"):
		var f1, f2 int
		if _, err := fmt.Sscanf(name[len("goldfhe_ntt_hybrid_fwd_"):], "%dx%d", &f1, &f2); err != nil {
			return 400, true
		}
		n, nparams = f1*f2, 3
		plan = g.plan(n, smallntt.Hybrid, f1, f2)
		st := plan.StageTables()[0]
		want = st.Twiddle
		if inverse {
			want = st.TwiddleInv
		}
	case name == "goldfhe_ntt_matrix_fwd" || name == "goldfhe_ntt_matrix_inv":
		nparams = 3
	default:
		return 0, false
	}
	params := unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), nparams)
	data, batch := *(*uint64)(params[0]), int(*(*int32)(params[1]))
	switch nparams {
	case 4: // butterfly: data, batch, n, table
		n = int(*(*int32)(params[2]))
		fwd, inv := g.plan(n, smallntt.Butterfly).ButterflyTables()
		want = fwd
		if inverse {
			want = inv
		}
		if !slices.Equal(words(*(*uint64)(params[3]), uint64(n)), want) {
			panic("fake " + name + ": the table is not the butterfly plan's")
		}
	case 3:
		if plan == nil { // matrix: data, batch, desc
			d := (*nttDescC)(params[2])
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
				if st.T == 1 {
					continue
				}
				tw := st.Twiddle
				if inverse {
					tw = st.TwiddleInv
				}
				if !slices.Equal(words(uint64(d.st[i].tw), uint64(st.Size)), tw) {
					panic(fmt.Sprintf("fake %s: stage %d's table is not the plan's", name, i+1))
				}
			}
		} else if !slices.Equal(words(*(*uint64)(params[2]), uint64(n)), want) {
			panic("fake " + name + ": the table is not the hybrid plan's stage-1 table")
		}
	}
	ref := g.plan(n, smallntt.Butterfly)
	polys := words(data, uint64(batch*n))
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
