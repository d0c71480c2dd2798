package smallntt

// The decomposed transform with matrix small transforms: a literal
// implementation of the stage structure in the Plan doc. Each column is
// gathered into a local array, transformed by the matrix kernel (every output
// on its own, one Reduce192 per output), and each output is multiplied by its
// stage twiddle (the only general multiplications) as it is scattered.

func (p *Plan) forwardMatrix(a, src []uint64, cyclic bool) {
	copy(a, src)
	for si := range p.stages {
		st := &p.stages[si]
		k, tw := st.kFwd, st.tw
		if si == 0 && cyclic {
			k, tw = st.kCycFwd, st.twCyc
		}
		st.matrixForward(a, k.m, tw)
	}
}

func (p *Plan) inverseMatrix(a, src []uint64, cyclic bool) {
	copy(a, src)
	for si := len(p.stages) - 1; si >= 0; si-- {
		st := &p.stages[si]
		k, tw := st.kInv, st.twInv
		if si == 0 && cyclic {
			k, tw = st.kCycInv, st.twCycInv
		}
		st.matrixInverse(a, k.m, tw)
	}
}

func (st *stage) matrixForward(a []uint64, k *matrixKernel, tw []uint64) {
	f, t, size := st.f, st.t, st.size
	var in, out [64]uint64
	var rev [64]int
	for r := 0; r < f; r++ {
		rev[r] = t * brv(r, st.logf)
	}
	for b := 0; b < len(a); b += size {
		blk := a[b : b+size]
		for c := 0; c < t; c++ {
			for i := 0; i < f; i++ {
				in[i] = blk[t*i+c]
			}
			k.apply(out[:f], in[:f])
			if tw == nil {
				for j := 0; j < f; j++ {
					blk[rev[j]+c] = out[j]
				}
			} else {
				for j := 0; j < f; j++ {
					pos := rev[j] + c
					blk[pos] = Mul(out[j], tw[pos])
				}
			}
		}
	}
}

func (st *stage) matrixInverse(a []uint64, k *matrixKernel, tw []uint64) {
	f, t, size := st.f, st.t, st.size
	var in, out [64]uint64
	var rev [64]int
	for r := 0; r < f; r++ {
		rev[r] = t * brv(r, st.logf)
	}
	for b := 0; b < len(a); b += size {
		blk := a[b : b+size]
		for c := 0; c < t; c++ {
			if tw == nil {
				for j := 0; j < f; j++ {
					in[j] = blk[rev[j]+c]
				}
			} else {
				for j := 0; j < f; j++ {
					pos := rev[j] + c
					in[j] = Mul(blk[pos], tw[pos])
				}
			}
			k.apply(out[:f], in[:f])
			for i := 0; i < f; i++ {
				blk[t*i+c] = out[i]
			}
		}
	}
}
