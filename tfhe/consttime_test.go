package tfhe

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// TestConstantTimeCode reads the compiled code of the functions that handle
// secret values and must not take value-dependent time: torus's normal
// sampling (normalPair, the functions it calls, gaussianTorus: a
// ciphertext's noise), EncodeBool (a message bit), torus.Encode's
// arithmetic on the message for a space that is not a power of two
// (encodeMod and the division by a reciprocal it calls, divRem),
// ModSwitch's rounding of a phase (modSwitchRound, Decode's), and
// smallntt's field operations that take a case (Reduce, Neg, FromInt64,
// ToInt64Centered: dotKey's products with the secret key, keyNTT's
// conversion of it). It reads their standalone copies; where they are
// inlined (dotKey, keyNTT, the transforms, ModSwitch) the compiler has
// made the same choices so far, which only reading that code would
// confirm. It runs go tool objdump on this package's and torus's test
// binaries, built again (the one running has no symbol table), for amd64,
// 386 (where a float–integer conversion is a runtime call) and arm64, and
// fails on a conditional jump but the stack-growth check of a function's
// prologue, an indirect jump, a call outside these functions but
// runtime.morestack, a division or square root, and (arm64) a fused
// multiply-add, which would make the sampler's values differ from amd64's.
//
// Some functions on secrets loop or branch on public values (a length, a
// dimension, the message space): decryption (PhaseTLWE, DecryptBool),
// Decode and ModSwitch. A branch there cannot be told from one on the
// secret by reading; the test checks only that they have no division (an
// instruction, or on 386 a call of the runtime's 64-bit division).
// Encode itself divides, by the message space only (newDivisor), and is
// not read.
func TestConstantTimeCode(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to run go tool objdump")
	}
	const checked = `torus\.(normalPair|lnUnit|recipNear2|sqrtPos|cosSinQuarter|gaussianTorus|` +
		`encodeMod|\(\*divisor\)\.divRem|modSwitchRound)|tfhe\.EncodeBool|` +
		`smallntt\.(Reduce|Neg|FromInt64|ToInt64Centered)`
	const divFree = `torus\.(Decode|ModSwitch)|tfhe\.\(\*SecretKey\)\.(PhaseTLWE|DecryptBool)`
	inChecked := regexp.MustCompile(`(` + checked + `)\(SB\)`)
	inDivFree := regexp.MustCompile(`(` + divFree + `)\(SB\)$`)
	// 386 divides 64-bit integers in the runtime.
	divCall := regexp.MustCompile(`runtime\.u?int64(div|mod)`)
	x86 := archRules{
		cond: regexp.MustCompile(`^J`), // JMP is matched before
		// The prologue's comparison of SP with the goroutine's stack guard
		// (R14 holds g on amd64, R12 = SP − frame for large frames; 386
		// loads g into CX).
		guard: regexp.MustCompile(`^(CMPQ (SP|R12), 0x10\(R14\)|CMPL SP, 0x8\(CX\))$`),
		// Division, square root, fused multiply-add, and x87 (F…).
		forbidden: regexp.MustCompile(`^(V?DIV|IDIV|V?SQRT|VFN?M(ADD|SUB)|F)`),
	}
	rules := map[string]archRules{"amd64": x86, "386": x86, "arm64": {
		cond:      regexp.MustCompile(`^(B(EQ|NE|CS|HS|CC|LO|MI|PL|VS|VC|HI|LS|GE|LT|GT|LE)|CBN?ZW?|TBN?Z)$`),
		guard:     regexp.MustCompile(`^CMP R16, RSP$`), // after MOVD 16(R28), R16
		forbidden: regexp.MustCompile(`^(FDIV|FSQRT|[SU]DIV|FN?M(ADD|SUB))`),
	}}
	direct := regexp.MustCompile(`^(0x[0-9a-f]+|-?[0-9]+\(PC\)|.*(` + checked + `)\(SB\))$`)
	sampler := []string{"torus.normalPair(SB)", "torus.gaussianTorus(SB)"}
	ours := []string{"tfhe.EncodeBool(SB)", "smallntt.Reduce(SB)", "smallntt.Neg(SB)",
		"smallntt.FromInt64(SB)", "smallntt.ToInt64Centered(SB)",
		"tfhe.(*SecretKey).PhaseTLWE(SB)", "tfhe.(*SecretKey).DecryptBool(SB)"}
	// torus's test binary keeps a standalone modSwitchRound (modSwitchRoundCopy).
	torusCT := []string{"torus.encodeMod(SB)", "torus.(*divisor).divRem(SB)", "torus.modSwitchRound(SB)",
		"torus.Decode(SB)", "torus.ModSwitch(SB)"}
	for _, c := range []struct {
		arch, pkg string   // pkg: the test binary's package
		need      []string // functions that must be in it
	}{
		{"amd64", ".", append(sampler, ours...)},
		{"arm64", ".", append(sampler, ours...)},
		{"amd64", "../torus", torusCT},
		{"arm64", "../torus", torusCT},
		{"386", ".", append(sampler, ours...)},
		{"386", "../torus", append(sampler, torusCT...)},
	} {
		r := rules[c.arch]
		t.Run(c.arch+"/"+filepath.Base(c.pkg), func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "x.test")
			build := exec.Command(goTool, "test", "-c", "-o", exe, c.pkg)
			// GOFLAGS could add -race or -gcflags=-l, which put calls in.
			build.Env = append(os.Environ(), "GOARCH="+c.arch, "GOFLAGS=", "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go test -c: %v\n%s", err, out)
			}
			out, err := exec.Command(goTool, "tool", "objdump", "-s", `(`+checked+`|`+divFree+`)$`, exe).CombinedOutput()
			if err != nil {
				t.Fatalf("go tool objdump: %v\n%s", err, out)
			}
			funcs := map[string]bool{}
			var fn, prev string
			var divOnly bool // fn branches on public values: read for divisions only
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				line := sc.Text()
				if name, ok := strings.CutPrefix(line, "TEXT "); ok {
					fn = strings.TrimPrefix(strings.Fields(name)[0], "github.com/goldfhe/goldfhe/")
					funcs[fn] = true
					divOnly = inDivFree.MatchString(fn)
					prev = ""
					continue
				}
				var inst string
				for _, field := range slices.Backward(strings.Split(line, "\t")) {
					if inst = strings.TrimSpace(field); inst != "" {
						break
					}
				}
				fields := strings.Fields(inst + " ? ?")
				op, arg := fields[0], fields[1]
				if divOnly {
					if r.forbidden.MatchString(op) || op == "CALL" && divCall.MatchString(inst) {
						t.Errorf("%s: %q", fn, inst)
					}
					continue
				}
				switch {
				case op == "JMP" && direct.MatchString(arg):
					// Within the function, or back to its start after the
					// stack grew.
				case op == "RET":
				case r.cond.MatchString(op) && r.guard.MatchString(prev):
				case op == "CALL" && (inChecked.MatchString(inst) || strings.Contains(inst, "runtime.morestack")):
				case op == "JMP", op == "CALL", r.cond.MatchString(op), r.forbidden.MatchString(op):
					t.Errorf("%s: %q", fn, inst)
				}
				prev = inst
			}
			for _, f := range c.need {
				if !funcs[f] {
					t.Fatalf("%s not in the objdump output:\n%s", f, out)
				}
			}
			t.Logf("checked %v (%d functions kept by fieldOps)", slices.Sorted(maps.Keys(funcs)), len(fieldOps))
		})
	}
}

// archRules tell TestConstantTimeCode one architecture's mnemonics
// (Go assembler syntax, as go tool objdump prints them).
type archRules struct {
	cond      *regexp.Regexp // a conditional branch
	guard     *regexp.Regexp // the instruction before the prologue's branch
	forbidden *regexp.Regexp // variable-latency or fused arithmetic
}

// encodeBool is EncodeBool as a function value, which keeps a copy of it
// that is not inlined in the test binary for TestConstantTimeCode; so
// does fieldOps for the field operations and DecryptBool.
var (
	encodeBool = EncodeBool
	fieldOps   = []any{smallntt.Reduce, smallntt.Neg, smallntt.FromInt64, smallntt.ToInt64Centered, (*SecretKey).DecryptBool}
)

func TestEncodeBool(t *testing.T) {
	if got, want := encodeBool(true), torus.Encode(1, 8); got != want {
		t.Errorf("EncodeBool(true) = %#x, want %#x", got, want)
	}
	if got, want := encodeBool(false), torus.Encode(-1, 8); got != want {
		t.Errorf("EncodeBool(false) = %#x, want %#x", got, want)
	}
}
