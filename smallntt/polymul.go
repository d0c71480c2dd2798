package smallntt

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrBound is returned (wrapped) by MulInt64 and MulInt64To when the inputs
// could make a coefficient of the true product reach P/2 in absolute value,
// where the NTT product stops being exact (DESIGN.md §3).
var ErrBound = errors.New("smallntt: product bound exceeded")

// Workspace is scratch memory for MulInt64To: two N-point buffers. It is not
// safe for concurrent use; give each goroutine its own (NewWorkspace is
// cheap), and use it only with plans of its size.
type Workspace struct {
	a, b NTTPoly
}

// NewWorkspace returns scratch memory for p's MulInt64To.
func (p *Plan) NewWorkspace() *Workspace {
	return &Workspace{a: make(NTTPoly, p.n), b: make(NTTPoly, p.n)}
}

// MulInt64 returns the negacyclic product a·b mod X^N+1 of two signed
// integer polynomials of length N, exactly, or an error wrapping ErrBound
// when max|a|·max|b|·N > (P−1)/2 (a conservative test of DESIGN.md §3's
// bound |every coefficient of the true product| < P/2). It allocates; see
// MulInt64To.
func (p *Plan) MulInt64(a, b []int64) ([]int64, error) {
	dst := make([]int64, p.n)
	if err := p.MulInt64To(dst, a, b, p.NewWorkspace()); err != nil {
		return nil, err
	}
	return dst, nil
}

// MulInt64To is MulInt64 writing into dst, with ws for scratch (nil: it
// allocates one); with a workspace it allocates nothing. dst may alias a or
// b. On error dst is left unchanged.
func (p *Plan) MulInt64To(dst, a, b []int64, ws *Workspace) error {
	if len(dst) != p.n || len(a) != p.n || len(b) != p.n {
		return fmt.Errorf("smallntt: MulInt64 on lengths %d, %d, %d, want N=%d", len(dst), len(a), len(b), p.n)
	}
	if err := CheckProductBound(p.n, MaxAbs(a), MaxAbs(b)); err != nil {
		return err
	}
	if ws == nil {
		ws = p.NewWorkspace()
	} else if len(ws.a) != p.n {
		return fmt.Errorf("smallntt: workspace of size %d for a plan of size %d", len(ws.a), p.n)
	}
	wa, wb := ws.a[:p.n], ws.b[:p.n]
	for i := range wa {
		wa[i], wb[i] = FromInt64(a[i]), FromInt64(b[i])
	}
	p.Forward(wa, Poly(wa))
	p.Forward(wb, Poly(wb))
	p.MulTo(wa, wa, wb)
	p.Inverse(Poly(wa), wa)
	for i := range dst {
		dst[i] = ToInt64Centered(wa[i])
	}
	return nil
}

// MaxAbs returns max_i |x_i| as an unsigned integer (exact for −2^63).
func MaxAbs(x []int64) uint64 {
	var m uint64
	for _, v := range x {
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		m = max(m, u)
	}
	return m
}

// CheckProductBound returns nil when maxA·maxB·n ≤ (P−1)/2, which bounds
// every coefficient of a negacyclic (or cyclic) product of two length-n
// integer polynomials with those maximum absolute values by (P−1)/2, so that
// an NTT over Z_p computes it exactly. Otherwise it returns an error
// wrapping ErrBound. n is the polynomials' length, any n ≥ 1 (a plan's is a
// power of two); n < 1 is an error that does not wrap ErrBound.
func CheckProductBound(n int, maxA, maxB uint64) error {
	if n < 1 {
		return fmt.Errorf("smallntt: CheckProductBound: length %d, want at least 1", n)
	}
	hi, lo := bits.Mul64(maxA, maxB)
	// floor((P−1)/2 / n), which bounds the product exactly: a·b·n ≤ (P−1)/2
	// if and only if a·b ≤ floor((P−1)/2 / n). (A shift by n's trailing
	// zeros, as before, is that only for a power of two: n = 768 was
	// taken for 256, and a product 3 times too large passed.)
	lim := (P / 2) / uint64(n)
	if hi != 0 || lo > lim {
		return fmt.Errorf("%w: max|a|·max|b|·N = %d·%d·%d > (P−1)/2, the NTT product would not be exact", ErrBound, maxA, maxB, n)
	}
	return nil
}
