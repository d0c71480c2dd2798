package smallntt_test

import (
	"fmt"

	"github.com/goldfhe/goldfhe/smallntt"
)

// Multiply (1 + 2X) by (3 − X^{N−1}) modulo X^N + 1: X·X^{N−1} = X^N = −1.
func ExamplePlan_MulInt64() {
	p, err := smallntt.DefaultPlan(256)
	if err != nil {
		panic(err)
	}
	a := make([]int64, 256)
	b := make([]int64, 256)
	a[0], a[1] = 1, 2
	b[0], b[255] = 3, -1
	c, err := p.MulInt64(a, b)
	if err != nil {
		panic(err)
	}
	fmt.Println(c[0], c[1], c[255])
	// Output: 5 6 -1
}

// The NTT domain of every plan of one size has the same layout, so a
// product can be formed with one plan and undone with another.
func ExamplePlan_Forward() {
	mat, _ := smallntt.NewPlan(1024, smallntt.Matrix, 8, 8, 16)
	bf, _ := smallntt.NewPlan(1024, smallntt.Butterfly)
	x := make(smallntt.Poly, 1024)
	y := make(smallntt.Poly, 1024)
	x[1], y[1023] = 1, 1 // X · X^1023 = X^1024 = −1
	fx := make(smallntt.NTTPoly, 1024)
	fy := make(smallntt.NTTPoly, 1024)
	mat.Forward(fx, x)
	bf.Forward(fy, y)
	mat.MulTo(fx, fx, fy)
	z := make(smallntt.Poly, 1024)
	bf.Inverse(z, fx)
	fmt.Println(smallntt.ToInt64Centered(z[0]), z[1])
	// Output: -1 0
}
