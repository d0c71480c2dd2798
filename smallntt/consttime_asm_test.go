package smallntt

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAssemblyConstantTime reads the amd64 assembly (the AVX2 and AVX-512
// transform kernels, which compute the client's products with its secret
// key, DESIGN.md §2, and MulSum's) and checks that no branch condition and
// no memory address depends on the values computed: a conditional jump
// (every Jcc; JMP is unconditional, CMOVcc and SETcc are not jumps) must
// follow a CMPQ, TESTQ, DECQ, SUBQ or ADDQ of public operands only, and
// every memory operand must be addressed by public registers. Public are
// constants, the function's arguments (pointers, lengths, strides, shifts:
// FP slots), registers and stack slots written only from public values,
// and XORQ R, R; a register written from memory through a data pointer,
// from a flag (ADCQ, SBBQ, CMOVcc, SETcc) or from a vector or mask register
// is not, nor is whatever is computed from it (one pass over each TEXT
// block until nothing changes: the registers are typed by all their
// writes, wherever they are). It also rejects a division or square root,
// a CALL and a JMP that is not to a label. The vector instructions the
// kernels use (VPMULUDQ, VPMADD52, VPCMPUQ into a mask, VPMINUQ …) have
// latencies that do not depend on their operands.
func TestAssemblyConstantTime(t *testing.T) {
	files, err := filepath.Glob("*.s")
	require.NoError(t, err)
	want := []string{"hybrid_amd64.s", "hybrid_avx512_amd64.s", "mulsum_amd64.s"}
	for _, w := range want {
		if !slices.Contains(files, w) {
			t.Fatalf("%s not found (have %v)", w, files)
		}
	}
	texts, jumps := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, fn := range asmFuncs(string(src)) {
			texts++
			for _, in := range fn.insts {
				if strings.HasPrefix(in.op, "J") && in.op != "JMP" {
					jumps++
				}
			}
			for _, msg := range fn.check() {
				t.Errorf("%s: %s: %s", f, fn.name, msg)
			}
		}
	}
	if texts < 50 {
		t.Fatalf("read only %d TEXT blocks", texts)
	}
	t.Logf("%d functions, %d conditional jumps", texts, jumps)
}

// asmInst is one instruction of a Go assembly file: its mnemonic and
// operands (the destination last), and its line.
type asmInst struct {
	line int
	op   string
	args []string
}

type asmFunc struct {
	name  string
	insts []asmInst
}

var asmTEXT = regexp.MustCompile(`^TEXT\s+·(\w+)\(SB\)`)

// asmFuncs splits src into its TEXT blocks.
func asmFuncs(src string) []*asmFunc {
	var out []*asmFunc
	var cur *asmFunc
	for i, line := range strings.Split(src, "\n") {
		if j := strings.Index(line, "//"); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if m := asmTEXT.FindStringSubmatch(line); m != nil {
			cur = &asmFunc{name: m[1]}
			out = append(out, cur)
			continue
		}
		if line == "" || cur == nil || strings.HasSuffix(line, ":") || strings.HasPrefix(line, "#") ||
			strings.HasPrefix(line, "DATA") || strings.HasPrefix(line, "GLOBL") {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		in := asmInst{line: i + 1, op: op}
		if rest = strings.TrimSpace(rest); rest != "" {
			for _, a := range splitOperands(rest) {
				in.args = append(in.args, strings.TrimSpace(a))
			}
		}
		cur.insts = append(cur.insts, in)
	}
	return out
}

// splitOperands splits at the commas outside parentheses.
func splitOperands(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

var (
	asmGP     = regexp.MustCompile(`^(AX|BX|CX|DX|SI|DI|BP|R8|R9|R1[0-5])$`)
	asmMem    = regexp.MustCompile(`^[^(]*\((\w+)\)(?:\((\w+)\*[1248]\))?$`)
	asmSlot   = regexp.MustCompile(`^\w*[+-]?\d*\((SP|FP)\)$`)
	asmVarLat = regexp.MustCompile(`^(V?DIV|IDIV|V?SQRT|VRCP|VRSQRT|CALL)`)
	// Instructions whose GP destination depends on the flags.
	asmFlagIn = regexp.MustCompile(`^(ADC|SBB|CMOV|SET)`)
	// Instructions that write no operand.
	asmNoDst = regexp.MustCompile(`^(CMP|TEST|PREFETCH|J|RET|VZEROUPPER)`)
	// What a conditional jump may follow, and a label.
	asmFlagOut = regexp.MustCompile(`^(CMP|TEST|DEC|SUB|ADD)Q$`)
	asmLabel   = regexp.MustCompile(`^\w+$`)
	// Read-modify-write integer instructions (the destination is read too).
	asmRMW = regexp.MustCompile(`^(ADD|SUB|AND|OR|XOR|SHL|SHR|SAR|IMUL|INC|DEC|NEG|NOT|ADC|SBB)[QLWB]$`)
)

// check returns what is wrong with f (see TestAssemblyConstantTime).
func (f *asmFunc) check() []string {
	// secret[x] for GP registers and SP and FP slots: every one is public
	// until some write of a value that is not makes it secret.
	secret := map[string]bool{}
	isPublic := func(a string) bool {
		switch {
		case strings.HasPrefix(a, "$"):
			return true
		case asmGP.MatchString(a), asmSlot.MatchString(a):
			return !secret[a]
		case strings.HasSuffix(a, "(SB)"):
			return false // a data table: its words are not the code's to branch on
		}
		return false // vector and mask registers, memory through a pointer
	}
	addrPublic := func(a string) bool {
		if strings.HasSuffix(a, "(SB)") || asmSlot.MatchString(a) {
			return true
		}
		m := asmMem.FindStringSubmatch(a)
		if m == nil {
			return true // not a memory operand
		}
		// A base or index must be a public GP register: a vector index
		// (VSIB, a gather's) holds values.
		reg := func(r string) bool { return asmGP.MatchString(r) && !secret[r] }
		return reg(m[1]) && (m[2] == "" || reg(m[2]))
	}
	for changed := true; changed; {
		changed = false
		for _, in := range f.insts {
			if len(in.args) == 0 || asmNoDst.MatchString(in.op) {
				continue
			}
			dsts := in.args[len(in.args)-1:]
			srcs := in.args[:len(in.args)-1]
			if in.op == "MULXQ" { // MULXQ src, lo, hi: DX times src
				dsts, srcs = in.args[1:], []string{in.args[0], "DX"}
			}
			if asmRMW.MatchString(in.op) {
				srcs = append(srcs, dsts...)
			}
			pub := !asmFlagIn.MatchString(in.op)
			if in.op == "XORQ" && len(in.args) == 2 && in.args[0] == in.args[1] {
				srcs = nil // zero
			}
			if in.op == "LEAQ" {
				pub = pub && addrPublic(srcs[0])
			} else {
				for _, s := range srcs {
					pub = pub && isPublic(s)
				}
			}
			for _, d := range dsts {
				if (asmGP.MatchString(d) || asmSlot.MatchString(d)) && !pub && !secret[d] {
					secret[d] = true
					changed = true
				}
			}
		}
	}
	var bad []string
	for i, in := range f.insts {
		where := func(msg string) { bad = append(bad, "line "+strconv.Itoa(in.line)+": "+msg) }
		if asmVarLat.MatchString(in.op) {
			where(in.op + " (variable latency, or a call)")
		}
		for _, a := range in.args {
			if !addrPublic(a) {
				where(in.op + " " + a + ": address from a secret register")
			}
		}
		if !strings.HasPrefix(in.op, "J") {
			continue
		}
		if in.op == "JMP" {
			if len(in.args) != 1 || !asmLabel.MatchString(in.args[0]) || asmGP.MatchString(in.args[0]) {
				where("JMP not to a label")
			}
			continue
		}
		var prev asmInst
		if i > 0 {
			prev = f.insts[i-1]
		}
		if !asmFlagOut.MatchString(prev.op) {
			where(in.op + " after " + prev.op + ": flags of what?")
			continue
		}
		for _, a := range prev.args {
			if !isPublic(a) {
				where(in.op + " on " + prev.op + " " + strings.Join(prev.args, ", ") + ": " + a + " is not public")
			}
		}
	}
	return bad
}

// TestAssemblyConstantTimeCatches shows the reading of
// TestAssemblyConstantTime on small functions: each bad one is caught.
func TestAssemblyConstantTimeCatches(t *testing.T) {
	const head = "TEXT ·f(SB), NOSPLIT, $0-24\n\tMOVQ a+0(FP), DI\n\tMOVQ n+8(FP), CX\n\tXORQ BX, BX\nloop:\n"
	for _, c := range []struct {
		name, body string
		bad        bool
	}{
		{"counter loop", "\tVMOVDQU (DI)(BX*8), Y0\n\tVPADDQ Y0, Y0, Y0\n\tVMOVDQU Y0, (DI)(BX*8)\n\tADDQ $4, BX\n\tCMPQ BX, CX\n\tJLT loop\n\tRET\n", false},
		{"stack slot", "\tMOVQ CX, 0(SP)\n\tMOVQ 0(SP), R8\n\tCMPQ BX, R8\n\tJLT loop\n\tRET\n", false},
		{"branch on a word", "\tMOVQ (DI), AX\n\tCMPQ AX, $1\n\tJLT loop\n\tRET\n", true},
		{"branch on a carry", "\tMOVQ (DI), AX\n\tADDQ AX, AX\n\tSBBQ R8, R8\n\tTESTQ R8, R8\n\tJNZ loop\n\tRET\n", true},
		{"through a stack slot", "\tMOVQ (DI), AX\n\tMOVQ AX, 8(SP)\n\tMOVQ 8(SP), R9\n\tCMPQ R9, CX\n\tJLT loop\n\tRET\n", true},
		{"secret index", "\tMOVQ (DI), AX\n\tANDQ $7, AX\n\tMOVQ (DI)(AX*8), R8\n\tRET\n", true},
		{"mask to register", "\tKMOVW K1, AX\n\tLEAQ (DI)(AX*8), R8\n\tMOVQ (R8), R9\n\tRET\n", true},
		{"gather by values", "\tVMOVDQU (DI), Y1\n\tVPCMPEQQ Y2, Y2, Y2\n\tVPGATHERQQ Y2, (DI)(Y1*8), Y0\n\tRET\n", true},
		{"flags of a vector op", "\tVPTEST Y0, Y0\n\tJNZ loop\n\tRET\n", true},
		{"division", "\tMOVQ CX, AX\n\tDIVQ CX\n\tRET\n", true},
		{"indirect jump", "\tJMP AX\n", true},
	} {
		fns := asmFuncs(head + c.body)
		if len(fns) != 1 {
			t.Fatalf("%s: %d functions", c.name, len(fns))
		}
		if got := fns[0].check(); (len(got) > 0) != c.bad {
			t.Errorf("%s: findings %q, want bad = %v", c.name, got, c.bad)
		}
	}
}
