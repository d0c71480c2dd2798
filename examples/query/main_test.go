package main

import (
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/examples/internal/selfexec"
)

// TestMain runs the program itself when the test binary is started with
// GOLDFHE_QUERY_MAIN set, so that its exit codes and output can be checked.
func TestMain(m *testing.M) { selfexec.Main(m, "GOLDFHE_QUERY_MAIN", main) }

// run starts the program with args and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return selfexec.Run(t, "GOLDFHE_QUERY_MAIN", args...)
}

// tiny is testdata/tiny.txt's flags: 4-bit keys, 8-bit values.
var tiny = []string{"-table", "testdata/tiny.txt", "-key-bits", "4", "-value-bits", "8"}

// TestEncryptedLookup runs two queries under encryption on the tiny table,
// with the CPU engine and the fastest named set (a second or two on 2
// cores): one key of the table and one not in it.
func TestEncryptedLookup(t *testing.T) {
	code, out := run(t, append(tiny, "-engine", "cpu", "-params", "CuFHE80", "-grouping", "1", "-query", "5,e")...)
	for _, want := range []string{
		"key 5 → a7  decrypted, matches the table",
		"key e → 00  decrypted, zero: no record has the key",
		"CPU: requested (UseCPU)",
		"answers  all 2 match a plaintext lookup",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("exit %d, output\n%s", code, out)
	}
}

// TestPlain answers every kind of query in plaintext, through the
// circuit: generated tables and the tiny file, -queries' keys in the table
// and not.
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{append(tiny, "-query", "5,0x3,e,9,0"), []string{
			"key 5 → a7  plaintext, matches",
			"key 3 → 1c  plaintext, matches",
			"key e → 00  plaintext, zero",
			"key 9 → 00  plaintext, matches", // a record of value zero
			"key 0 → 42  plaintext, matches",
		}},
		{[]string{"-records", "16", "-key-bits", "4", "-queries", "3"}, []string{"(record", "plaintext, matches"}}, // every key: no free one
		{[]string{"-records", "40", "-key-bits", "12", "-value-bits", "32", "-queries", "20"}, []string{"plaintext, zero", "answers  all 20 match a plaintext lookup"}},
		{[]string{"-records", "3", "-key-bits", "64", "-value-bits", "64", "-queries", "2"}, []string{"plaintext, matches", "plaintext, zero"}},
	} {
		code, out := run(t, append(tc.args, "-plain")...)
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q", tc.args, want)
			}
		}
		if code != 0 || strings.Contains(out, "WRONG") {
			t.Errorf("%v: exit %d, output\n%s", tc.args, code, out)
		}
	}
}

// TestCommandLine: bad flags exit with 2 and say why, before any key is
// made; a table file that cannot be read or parsed exits with 1 and names
// the file and line.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-key-bits", "0"}, 2, "-key-bits must be 1 to 64"},
		{[]string{"-value-bits", "65"}, 2, "-value-bits must be 1 to 64"},
		{[]string{"-records", "0"}, 2, "-records must be 1 to 65536"},
		{[]string{"-records", "17", "-key-bits", "4"}, 2, "-records must be 1 to 16 for 4-bit keys"},
		{[]string{"-queries", "0"}, 2, "-queries must be 1 to"},
		{[]string{"-records", "65536", "-key-bits", "64", "-value-bits", "64", "-queries", "4096"}, 2,
			"4096 queries of a table of 65536 records: up to"},
		{[]string{"-query", "1,10000"}, 2, "-query: key 2: gates: a 5-digit hex number does not fit in 16 bits"},
		{[]string{"-query", "1,,2"}, 2, "-query: key 2: gates: not a hex number"},
		{[]string{"-query", "zz"}, 2, "-query: key 1: gates: not a hex number: byte 0 of 2"},
		{[]string{"-params", "nope"}, 2, "unknown parameter set \"nope\""},
		{[]string{"-engine", "tpu"}, 2, "-engine: bootstrap: unknown engine"},
		{[]string{"-grouping", "4"}, 2, "-grouping must be 1 to 3"},
		{[]string{"-plain", "extra"}, 2, "unexpected argument \"extra\""},
		{[]string{"-no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"-table", "testdata/missing.txt"}, 1, "testdata/missing.txt: no such file"},
		{append(tiny[:4:4], "-value-bits", "4"), 1, "testdata/tiny.txt:3: value: gates: a 2-digit hex number does not fit in 4 bits"},
	} {
		code, out := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.msg) || strings.Contains(out, "keys     ") {
			t.Errorf("%v: exit %d, output\n%s\nwant exit %d, %q and no key made", tc.args, code, out, tc.code, tc.msg)
		}
	}
}

// TestEngineGPUWithoutGPU: -engine gpu on a machine without a usable GPU
// fails before any key is made, and names -engine auto.
func TestEngineGPUWithoutGPU(t *testing.T) {
	if _, err := bootstrap.GPUDevices(); err == nil {
		t.Skip("a GPU is usable here")
	}
	code, out := run(t, append(tiny, "-engine", "gpu")...)
	if code != 1 || !strings.Contains(out, "-engine auto") || strings.Contains(out, "keys     ") {
		t.Errorf("exit %d, output\n%s\nwant exit 1, -engine auto named and no key made", code, out)
	}
}

// TestPlainEngineGPUWithoutGPU: -plain makes no keys and no engine, so
// -engine gpu does not stop it on a machine without a usable GPU (as in
// examples/circuit).
func TestPlainEngineGPUWithoutGPU(t *testing.T) {
	if _, err := bootstrap.GPUDevices(); err == nil {
		t.Skip("a GPU is usable here")
	}
	code, out := run(t, append(tiny, "-plain", "-engine", "gpu", "-query", "5")...)
	if code != 0 || !strings.Contains(out, "key 5 → a7  plaintext, matches") {
		t.Errorf("exit %d, output\n%s\nwant exit 0 and the plaintext answer", code, out)
	}
}
