// Package enginecheck is the example programs' check of -engine gpu before
// any key is made: a machine without a usable GPU fails at once, with the
// way out, rather than after seconds of key generation.
package enginecheck

import (
	"fmt"

	"github.com/goldfhe/goldfhe/bootstrap"
)

// NoGPU wraps err, bootstrap.GPUDevices' error, as -engine gpu's failure,
// naming -engine auto.
func NoGPU(err error) error {
	return fmt.Errorf("-engine gpu: %w (-engine auto takes the CPU engine where no GPU is usable)", err)
}

// Require returns NoGPU's error when use is bootstrap.UseGPU and the
// machine has no usable GPU, and nil otherwise.
func Require(use bootstrap.Use) error {
	if use != bootstrap.UseGPU {
		return nil
	}
	if _, err := bootstrap.GPUDevices(); err != nil {
		return NoGPU(err)
	}
	return nil
}
