package enginecheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/stretchr/testify/assert"
)

// TestRequire: only -engine gpu asks for a GPU, and without one its error
// wraps bootstrap.ErrNoGPU and names -engine auto.
func TestRequire(t *testing.T) {
	for _, use := range []bootstrap.Use{bootstrap.UseAuto, bootstrap.UseCPU} {
		assert.NoErrorf(t, Require(use), "Require(%v)", use)
	}
	if _, err := bootstrap.GPUDevices(); err == nil {
		t.Skip("a GPU is usable here")
	}
	err := Require(bootstrap.UseGPU)
	if !errors.Is(err, bootstrap.ErrNoGPU) || !strings.Contains(err.Error(), "-engine auto") {
		t.Errorf("Require(UseGPU) without a GPU: %v", err)
	}
}
