package main

import (
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/examples/internal/selfexec"
)

// TestMain runs the program itself when the test binary is started with
// GOLDFHE_CIRCUIT_MAIN set (TestCommandLine), so that its exit codes and
// output can be checked.
func TestMain(m *testing.M) { selfexec.Main(m, "GOLDFHE_CIRCUIT_MAIN", main) }

// run starts the program with args and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return selfexec.Run(t, "GOLDFHE_CIRCUIT_MAIN", args...)
}

// TestCommandLine: bad flags exit with 2 and say why before any key is
// made, and byte-string inputs may use HexBits' _ separators.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		// A count of sets no machine could hold is refused up front, not
		// by running out of memory after key generation (2·10^9 sets of 504
		// wires of 501 words: 1.8 PiB).
		{[]string{"-circuit", "add64", "-params", "CuFHE80", "-engine", "cpu", "-instances", "2000000000"}, 2, "GiB of samples"}, // fits a 32-bit int
		{[]string{"-circuit", "aes128", "-plain", "-in", "000102030405060708090a0b0c0d0e,00112233445566778899aabbccddeeff"}, 2, "30 hex digits, want 32"},
		// FIPS-197 appendix C.1, the key written in groups.
		{[]string{"-circuit", "aes128", "-plain", "-in", "00010203_04050607_08090a0b_0c0d0e0f,00112233445566778899aabbccddeeff"}, 0, "69c4e0d86a7b0430d8cdb78070b4c55a"},
	} {
		code, out := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.msg) {
			t.Errorf("%v: exit %d, output\n%s\nwant exit %d and %q", tc.args, code, out, tc.code, tc.msg)
		}
	}
}

// TestEngineGPUWithoutGPU: -engine gpu on a machine without a usable GPU
// fails before any key is made, and names -engine auto.
func TestEngineGPUWithoutGPU(t *testing.T) {
	if _, err := bootstrap.GPUDevices(); err == nil {
		t.Skip("a GPU is usable here")
	}
	code, out := run(t, "-circuit", "adder64", "-engine", "gpu")
	if code != 1 || !strings.Contains(out, "-engine auto") || strings.Contains(out, "generating") {
		t.Errorf("exit %d, output\n%s\nwant exit 1, -engine auto named and no key generated", code, out)
	}
}
