package smallntt

// Tables for other implementations of the same transforms (the GPU kernels
// in kernels/, which must reproduce a Plan bit for bit). Each accessor
// returns copies: a Plan stays immutable.

// StageTable describes stage s of a decomposed plan (see the Plan doc): the
// array is cut into blocks of Size positions, F rows by T columns, and
// Twiddle[t·r + c] / TwiddleInv[t·r + c] are T_s and T'_s of the negacyclic
// transform (stage 1's T'_1 carries N^{−1}). Both are nil when T == 1.
type StageTable struct {
	F, T, Size          int
	Twiddle, TwiddleInv []uint64
}

// StageTables returns the stages of a decomposed plan (Matrix,
// MatrixNoMerge, Hybrid) in stage order, and nil for Butterfly.
func (p *Plan) StageTables() []StageTable {
	if len(p.stages) == 0 {
		return nil
	}
	out := make([]StageTable, len(p.stages))
	for i, st := range p.stages {
		out[i] = StageTable{
			F: st.f, T: st.t, Size: st.size,
			Twiddle:    clone(st.tw),
			TwiddleInv: clone(st.twInv),
		}
	}
	return out
}

// ButterflyTables returns the negacyclic tables of a Butterfly plan (nil,
// nil for the others): fwd[m+g] = ψ^{brv_L(m+g)} for level m, group g, and
// inv[m+g] its inverse, except inv[0] = N^{−1} and inv[1] = ψ^{−brv_L(1)}·N^{−1},
// which the last inverse level (m = 1) uses to fold in the scaling.
func (p *Plan) ButterflyTables() (fwd, inv []uint64) {
	return clone(p.bfNeg), clone(p.bfNegInv)
}

func clone(a []uint64) []uint64 {
	if a == nil {
		return nil
	}
	return append([]uint64(nil), a...)
}
