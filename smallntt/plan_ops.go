package smallntt

// MulAdd sets acc[j] += a[j]·b[j] for every j. All three must have length N
// (any plan of that N: they share the layout); acc may alias a or b. Inputs
// any; acc canonical on return.
func (p *Plan) MulAdd(acc, a, b NTTPoly) {
	p.check(len(acc), len(a))
	p.check(len(acc), len(b))
	a, b = a[:len(acc)], b[:len(acc)]
	for j := range acc {
		acc[j] = Reduce(addLazy(acc[j], mulLazy(a[j], b[j])))
	}
}

// MulTo sets dst[j] = a[j]·b[j]. Lengths N; dst may alias a or b. Inputs
// any; dst canonical.
func (p *Plan) MulTo(dst, a, b NTTPoly) {
	p.check(len(dst), len(a))
	p.check(len(dst), len(b))
	a, b = a[:len(dst)], b[:len(dst)]
	for j := range dst {
		dst[j] = Mul(a[j], b[j])
	}
}
