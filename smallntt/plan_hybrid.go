package smallntt

type hybridStage struct{}

func newHybridStage(st *stage, first bool) *hybridStage { return &hybridStage{} }

func (p *Plan) forwardHybrid(a, src []uint64, cyclic bool) { p.forwardMatrix(a, src, cyclic) }
func (p *Plan) inverseHybrid(a, src []uint64, cyclic bool) { p.inverseMatrix(a, src, cyclic) }
