//go:build !amd64 || purego

package tfhe

import "github.com/goldfhe/goldfhe/torus"

// Without assembly key switching runs keySwitch.

var useKSAsm = false

func keySwitchAccel(out, in []torus.Torus32, table []torus.Torus32, p Params, rows []int64) bool {
	return false
}
