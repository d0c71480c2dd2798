package tfhe

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// The functions TestConstantTimeCode reads, by what it allows in them
// (regular expressions on go tool objdump's names, module path removed).
// Together they are the client's computation on secrets (DESIGN.md §2,
// "Secrets and time", gives the call graph): key generation, encryption
// and decryption down to smallntt's kernels, but for the AVX2 and AVX-512
// assembly, which smallntt.TestAssemblyConstantTime reads.
const (
	// ctStraight take no conditional branch at all: torus's normal
	// sampling (normalPair, the functions it calls, gaussianTorus: a
	// ciphertext's noise), EncodeBool (a message bit), torus.Encode's
	// arithmetic on the message for a space that is not a power of two
	// (encodeMod and divRem), ModSwitch's rounding of a phase, and
	// smallntt's field operations (the products with the secret key and
	// the transforms of the key and of those products are made of them).
	ctStraight = `torus\.(normalPair|lnUnit|recipNear2|sqrtPos|cosSinQuarter|gaussianTorus|` +
		`encodeMod|\(\*divisor\)\.divRem|modSwitchRound)|tfhe\.EncodeBool|` +
		`smallntt\.(Reduce|Neg|FromInt64|ToInt64Centered|Add|Sub|Mul|mulLazy|Reduce128|reduce128Lazy|Reduce192|` +
		`addLazy|subLazy|addT|subT|shlLo|shlMid|shlHi|shlLoC|shlMidC)`

	// ctControl loop and dispatch on public values only: lengths and
	// dimensions, the plan's stages and kernels, the sampler's spare value
	// (how many values were drawn), nil and aliasing checks. All their
	// arithmetic on secrets is in ctStraight functions, inlined or called:
	// a conditional branch must be the stack check, a bounds check (it
	// jumps or falls through to a runtime panic: taken never, and on a
	// loop index), or at a source line of a loop (for …) or one of
	// ctPublicLines, never at a line of ctValueFiles. Positions are those
	// of the innermost inlined function, so a branch of an inlined field
	// operation shows at its line in field.go.
	//
	// generateCloudKey's closures 2, 3 and 5 encrypt the
	// bootstrapping key's rows, its grouped rows and the key-switching
	// rows; groupMessage is inlined in the second, read as a copy too.
	ctControl = `tfhe\.(\(\*nttScratch\)\.dotKey|keyNTT|lazyNTT\.func1|encryptTLWE|encryptTRLWEZero|encryptTRGSW|` +
		`groupMessage|generateCloudKey\.func[235]|\(\*SecretKey\)\.(trlweNTT|PhaseTLWE|PhaseTRLWE|DecryptBool)|` +
		`\(\*Encryptor\)\.EncryptTRLWETo)|` +
		`torus\.(AddTo|SubTo|\(\*Sampler\)\.(AddGaussian|Gaussian|normal|BinarySlice))|` +
		`smallntt\.(\(\*Plan\)\.(Forward|Inverse|forward|inverse|check|forwardHybrid|inverseHybrid|MulAdd)|` +
		`hyLast(Forward|Inverse)|hy(Fwd|Inv)[0-9]+|hyCol(Fwd|Inv)(Tw|Cyc)[0-9]+|newHybridStage\.func[0-9]+|accel(Col|Last)\.func1)`

	// ctDivFree branch on public values (the message space or modulus),
	// which reading cannot tell from a branch on the secret: they are
	// read for divisions only (an instruction, or on 386 a call of the
	// runtime's 64-bit division). Encode itself divides, by the message
	// space only (newDivisor), and is not read.
	ctDivFree = `torus\.(Decode|ModSwitch)`

	// ctIndirect may call through a function value: the plan's kernels
	// (all of them ctControl functions, or assembly), the key's lazily
	// computed transform (lazyNTT's sync.OnceValue).
	ctIndirect = `smallntt\.(\(\*Plan\)\.(forwardHybrid|inverseHybrid)|accel(Col|Last)\.func1)|tfhe\.\(\*SecretKey\)\.trlweNTT`

	// ctPublicCallee are the functions outside these lists that ctControl
	// functions may call: allocation, copying, write barriers and panics
	// (on lengths and shapes, with their messages), the ChaCha8 stream
	// (its time does not depend on its state), the sampler's derivation
	// and uniform masks (public, part of the ciphertext), FromFloat64 for
	// a noise sigma beyond 4096 (public; not constant-time, DESIGN.md §2)
	// and the other plan variants (the client's plans are Hybrid:
	// tfhe.internalPlan). The assembly kernels are called through function
	// values (ctIndirect).
	ctPublicCallee = `^runtime\.(morestack|panic|gopanic|memmove|memclrNoHeapPointers|makeslice|growslice|convT|gcWriteBarrier)|` +
		`^fmt\.Sprintf|^math/rand/v2\.\(\*ChaCha8\)\.Uint64|` +
		`^torus\.(\(\*Sampler\)\.(UniformSlice|Derive)|FromFloat64)|^tfhe\.(internalPlan|\(\*KeySwitchingKey\)\.Sample)|` +
		`^smallntt\.\(\*Plan\)\.(forward|inverse)(Matrix|Butterfly)`
)

// ctValueFiles hold the arithmetic on values: no conditional branch may
// come from a line of theirs, in any function read.
var ctValueFiles = []string{"smallntt/field.go", "smallntt/field_shift.go", "smallntt/field_reduce.go",
	"smallntt/field_reduce_386.go", "torus/torus.go", "torus/normal.go", "torus/divisor.go"}

// ctPublicLines are the source lines (trimmed, comment removed, by file)
// at which a ctControl function may branch besides its loops: each on a
// public value.
var ctPublicLines = map[string][]string{
	// The plan's variant and lengths, the stage size f (the switch of
	// hyLastForward and hyLastInverse), whether a transform is cyclic,
	// whether dst is src (copy), the kernels' checks of their shapes.
	"smallntt/plan.go":        {"case Butterfly:", "case Hybrid:", "if a != p.n || b != p.n {"},
	"smallntt/plan_hybrid.go": {"copy(a, src)", "if si == 0 && cyclic {", "case 4:", "case 8:", "case 16:", "case 32:", "case 64:"},
	"smallntt/hybrid_amd64.go": {"if t%4 != 0 || len(blk) != 4*(len(blk)/4) || len(T) < len(blk) || len(blk) == 0 {",
		"if z != nil && t%8 == 0 {", "if len(a)%(4*f) != 0 || len(a) == 0 {", "if z != nil && len(a)%(8*f) == 0 {"},
	// The noise's sigma, whether a spare normal value is left (how many
	// were drawn), lengths.
	"torus/sampler.go": {"if !(math.Abs(sigma) <= maxRoundSigma) || len(dst) == 0 {", "if !(math.Abs(sigma) <= maxRoundSigma) {",
		"if s.spare.ok {", "if sp := s.spare; sp.ok {", "if i < len(dst) {"},
	"torus/poly.go": {"if l != n {"},
	// A key or ciphertext that is nil or of another shape, a message that
	// aliases the ciphertext (pointers), the key's transform not made yet.
	"tfhe/keys.go": {"if sk.keyBits == nil {", "if sk.ntt == nil {"},
	// Whether the key is compressed (its masks from a public seed's
	// streams, the TRGSW messages in the bodies), and the TRGSW row's
	// column.
	"tfhe/keys_gen.go": {"if maskRoot != nil {", "if !bodyOnly || c == k {"},
	"tfhe/encrypt.go": {"case len(lwe):", "case len(ext):", "if &q[0] == &mu[0] {",
		"if !dst.wellFormed(p.GLWEDimension(), p.PolyDegree()) || len(mu) != p.PolyDegree() {"},
	"tfhe/trlwe.go": {"if c == nil || len(c.Value) != k+1 {", "if len(p) != n {"},
	// The write barrier of a pointer store (the collector's phase), and
	// clear's length.
	"tfhe/plan.go": {"out[j] = make(smallntt.NTTPoly, len(s))", "clear(sc.acc)"},
}

// TestConstantTimeCode reads the compiled code of the functions that handle
// secret values (ctStraight, ctControl, ctDivFree) and fails on what would
// make their time depend on a secret. It runs go tool objdump on this
// package's, smallntt's and torus's test binaries, built again (the one
// running has no symbol table), for amd64, 386 (where a 64-bit comparison
// is a branch on the high words, and a float–integer conversion a runtime
// call) and arm64, each at its baseline level whatever the environment
// says (GOAMD64=v1, GO386=sse2, GOARM64=v8.0: go tool objdump misreads
// the VEX-encoded scalar code of GOAMD64=v3), and fails on an instruction
// it cannot decode, on a conditional jump but those each class
// allows, an indirect jump or call outside ctIndirect, a call outside
// these functions and ctPublicCallee (a ctStraight function: outside these
// functions and runtime.morestack), a division or square root, x87 code
// and (arm64) a fused multiply-add, which would make the sampler's values
// differ from amd64's. The amd64 binaries hold the Go kernels too, those
// of a CPU without AVX2 or of -tags purego (the same code). Standalone
// copies of inlined functions are kept by function values (fieldOps here,
// smallntt's fieldCopies, torus's modSwitchRoundCopy).
func TestConstantTimeCode(t *testing.T) {
	if raceEnabled {
		// The binaries it reads are built without -race (GOFLAGS cleared),
		// so make test's -race pass would read the same code again.
		t.Skip("reads the same code as the run without -race")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to run go tool objdump")
	}
	all := `(` + ctStraight + `|` + ctControl + `|` + ctDivFree + `)`
	isStraight := regexp.MustCompile(`^(` + ctStraight + `)\(SB\)$`)
	isControl := regexp.MustCompile(`^(` + ctControl + `)\(SB\)$`)
	isDivFree := regexp.MustCompile(`^(` + ctDivFree + `)\(SB\)$`)
	isIndirect := regexp.MustCompile(`^(` + ctIndirect + `)\(SB\)$`)
	isRead := regexp.MustCompile(`^` + all + `(\.abi0)?\(SB\)$`)
	publicCallee := regexp.MustCompile(`(` + ctPublicCallee + `)`)
	// 386 divides 64-bit integers in the runtime.
	divCall := regexp.MustCompile(`runtime\.u?int64(div|mod)`)
	x86 := archRules{
		cond: regexp.MustCompile(`^J`), // JMP is matched before
		// The prologue's comparison of SP (or, for a large frame, SP −
		// frame in R12, AX) with the goroutine's stack guard (R14 holds g
		// on amd64; 386 loads g into CX).
		guard: regexp.MustCompile(`^(CMPQ (SP|R12), 0x10\(R14\)|CMPL (SP|AX), 0x8\(CX\))$`),
		// Division, square root, fused multiply-add, and x87 (F…).
		forbidden: regexp.MustCompile(`^(V?DIV|IDIV|V?SQRT|VFN?M(ADD|SUB)|F)`),
	}
	rules := map[string]archRules{"amd64": x86, "386": x86, "arm64": {
		cond:      regexp.MustCompile(`^(B(EQ|NE|CS|HS|CC|LO|MI|PL|VS|VC|HI|LS|GE|LT|GT|LE)|CBN?ZW?|TBN?Z)$`),
		guard:     regexp.MustCompile(`^CMP R16, R(SP|17)$`), // after MOVD 16(R28), R16
		forbidden: regexp.MustCompile(`^(FDIV|FSQRT|[SU]DIV|FN?M(ADD|SUB))`),
	}}
	target := regexp.MustCompile(`^(0x[0-9a-f]+|-?[0-9]+\(PC\))$`)
	sampler := []string{"torus.normalPair(SB)", "torus.gaussianTorus(SB)", "torus.(*Sampler).AddGaussian(SB)", "torus.(*Sampler).BinarySlice(SB)"}
	ours := []string{"tfhe.EncodeBool(SB)", "tfhe.groupMessage(SB)", "tfhe.(*SecretKey).PhaseTLWE(SB)", "tfhe.(*SecretKey).DecryptBool(SB)",
		"tfhe.(*SecretKey).PhaseTRLWE(SB)", "tfhe.(*nttScratch).dotKey(SB)", "tfhe.keyNTT(SB)", "tfhe.encryptTLWE(SB)",
		"tfhe.encryptTRLWEZero(SB)", "tfhe.encryptTRGSW(SB)", "tfhe.generateCloudKey.func2(SB)",
		"tfhe.generateCloudKey.func3(SB)", "tfhe.generateCloudKey.func5(SB)", "torus.AddTo(SB)"}
	// smallntt's test binary keeps standalone copies of the field
	// operations (fieldCopies), most of them inlined elsewhere.
	field := []string{"smallntt.Reduce(SB)", "smallntt.Neg(SB)", "smallntt.FromInt64(SB)", "smallntt.ToInt64Centered(SB)",
		"smallntt.Add(SB)", "smallntt.Sub(SB)", "smallntt.Mul(SB)", "smallntt.mulLazy(SB)", "smallntt.Reduce128(SB)",
		"smallntt.reduce128Lazy(SB)", "smallntt.Reduce192(SB)", "smallntt.addLazy(SB)", "smallntt.subLazy(SB)",
		"smallntt.addT(SB)", "smallntt.subT(SB)", "smallntt.shlLo(SB)", "smallntt.shlMid(SB)", "smallntt.shlHi(SB)",
		"smallntt.shlLoC(SB)", "smallntt.shlMidC(SB)",
		"smallntt.(*Plan).Forward(SB)", "smallntt.(*Plan).Inverse(SB)", "smallntt.(*Plan).forwardHybrid(SB)",
		"smallntt.(*Plan).inverseHybrid(SB)", "smallntt.(*Plan).MulAdd(SB)", "smallntt.hyLastForward(SB)",
		"smallntt.hyFwd8(SB)", "smallntt.hyInv16(SB)", "smallntt.hyColFwdTw4(SB)", "smallntt.hyColInvCyc32(SB)"}
	// torus's test binary keeps a standalone modSwitchRound (modSwitchRoundCopy).
	torusCT := []string{"torus.encodeMod(SB)", "torus.(*divisor).divRem(SB)", "torus.modSwitchRound(SB)",
		"torus.Decode(SB)", "torus.ModSwitch(SB)"}
	src := sourceLines{}
	for _, c := range []struct {
		arch, pkg string   // pkg: the test binary's package
		need      []string // functions that must be in it
	}{
		{"amd64", ".", append(sampler, ours...)},
		{"arm64", ".", append(sampler, ours...)},
		{"386", ".", append(sampler, ours...)},
		{"amd64", "../smallntt", field},
		{"arm64", "../smallntt", field},
		{"386", "../smallntt", field},
		{"amd64", "../torus", torusCT},
		{"arm64", "../torus", torusCT},
		{"386", "../torus", append(sampler, torusCT...)},
	} {
		r := rules[c.arch]
		t.Run(c.arch+"/"+filepath.Base(c.pkg), func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "x.test")
			build := exec.Command(goTool, "test", "-c", "-o", exe, c.pkg)
			// GOFLAGS could add -race or -gcflags=-l, which put calls in.
			// The architecture levels are the baselines: go tool objdump
			// does not decode the VEX encoding that GOAMD64=v3 uses for
			// scalar code too (SHLX, ANDN), and read the bytes as other
			// instructions, divisions and jumps among them (or as "?");
			// GO386=softfloat calls the runtime for floating point (not
			// covered, DESIGN.md §2).
			build.Env = append(os.Environ(), "GOARCH="+c.arch, "GOFLAGS=", "CGO_ENABLED=0",
				"GOAMD64=v1", "GO386=sse2", "GOARM64=v8.0")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go test -c: %v\n%s", err, out)
			}
			out, err := exec.Command(goTool, "tool", "objdump", "-s", all+`$`, exe).CombinedOutput()
			if err != nil {
				t.Fatalf("go tool objdump: %v\n%s", err, out)
			}
			funcs := readObjdump(out)
			// The conditional branches of ctControl functions to place in
			// the source, and their calls of a bare address (386 copies and
			// clears structs by calling into runtime.duffcopy and duffzero).
			var place, calls []ctSite
			for fn, insts := range funcs {
				straight, control := isStraight.MatchString(fn), isControl.MatchString(fn)
				divOnly := isDivFree.MatchString(fn)
				if !straight && !control && !divOnly {
					continue // matched the objdump pattern only as a prefix
				}
				for i, in := range insts {
					fields := strings.Fields(in.text + " ? ?")
					op, arg := fields[0], fields[1]
					bad := func() { t.Errorf("%s: %q", fn, in.text) }
					if op == "?" {
						// Bytes go tool objdump cannot decode: it may have
						// read a branch as something else.
						t.Errorf("%s: undecodable instruction at %#x", fn, in.addr)
						continue
					}
					if r.forbidden.MatchString(op) || op == "CALL" && divCall.MatchString(in.text) {
						bad()
					}
					if divOnly {
						continue
					}
					callee := strings.TrimPrefix(arg, "github.com/goldfhe/goldfhe/")
					switch {
					case op == "RET":
					case op == "JMP" && (target.MatchString(arg) || callee == fn):
						// Within the function, or back to its start after
						// the stack grew.
					case r.cond.MatchString(op):
						switch {
						case i > 0 && r.guard.MatchString(insts[i-1].text):
						case straight:
							bad()
						case reachesPanic(insts, i+1) || reachesPanic(insts, insts.index(branchTarget(insts, i))):
							// A bounds check.
						default:
							place = append(place, ctSite{fn, in})
						}
					case op == "CALL" && strings.HasPrefix(arg, "runtime.morestack"):
					case op == "CALL" && isRead.MatchString(callee):
					case op == "CALL" && control && publicCallee.MatchString(callee):
					case op == "CALL" && !strings.HasSuffix(arg, "(SB)") && isIndirect.MatchString(fn):
					case op == "CALL" && control && strings.HasPrefix(arg, "0x"):
						calls = append(calls, ctSite{fn, in})
					case op == "JMP", op == "CALL":
						bad()
					}
				}
			}
			var addrs []uint64
			for _, b := range place {
				addrs = append(addrs, b.in.addr)
			}
			for _, c := range calls {
				addrs = append(addrs, branchTarget(objFunc{c.in}, 0))
			}
			pos := src.positions(t, goTool, exe, addrs)
			for _, c := range calls {
				if fn := pos[branchTarget(objFunc{c.in}, 0)].fn; fn != "runtime.duffcopy" && fn != "runtime.duffzero" {
					t.Errorf("%s: %q (%s)", c.fn, c.in.text, fn)
				}
			}
			for _, b := range place {
				p := pos[b.in.addr]
				short := filepath.Base(filepath.Dir(p.file)) + "/" + filepath.Base(p.file)
				switch {
				case slices.Contains(ctValueFiles, short):
					t.Errorf("%s: %q at %s:%d (%s): a branch in a field or torus operation", b.fn, b.in.text, short, p.line, p.text)
				case strings.HasPrefix(p.text, "for "):
				case slices.Contains(ctPublicLines[short], p.text):
				default:
					t.Errorf("%s: %q at %s:%d (%s): not a loop, nor a branch of ctPublicLines", b.fn, b.in.text, short, p.line, p.text)
				}
			}
			for _, f := range c.need {
				if len(funcs[f]) == 0 { // absent, or its instructions not read
					t.Fatalf("%s not in the objdump output, or no instruction of it read (%d functions read)", f, len(funcs))
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

// objInst is one instruction of go tool objdump's output.
type objInst struct {
	addr uint64
	text string
}

type objFunc []objInst

// index returns the position of the instruction at addr, or −1.
func (f objFunc) index(addr uint64) int {
	for i, in := range f {
		if in.addr == addr {
			return i
		}
	}
	return -1
}

// ctSite is an instruction of fn that TestConstantTimeCode looks up with
// go tool addr2line: a conditional branch, or a call of a bare address.
type ctSite struct {
	fn string
	in objInst
}

// readObjdump returns the instructions of each function (module path
// removed from the names).
func readObjdump(out []byte) map[string]objFunc {
	funcs := map[string]objFunc{}
	var fn string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "TEXT "); ok {
			fn = strings.TrimPrefix(strings.Fields(name)[0], "github.com/goldfhe/goldfhe/")
			funcs[fn] = objFunc{}
			continue
		}
		var fields []string
		for _, f := range strings.Split(line, "\t") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) < 3 || fn == "" {
			continue
		}
		addr, err := strconv.ParseUint(fields[1], 0, 64)
		if err != nil {
			continue
		}
		if fields[len(fields)-1] == "?" && len(fields) == 4 && strings.Trim(fields[2], "0") == "" {
			continue // arm64's zero words after a function's last instruction
		}
		funcs[fn] = append(funcs[fn], objInst{addr, fields[len(fields)-1]})
	}
	return funcs
}

// branchTarget returns the address a branch at f[i] jumps to (0 if it
// cannot tell): objdump prints an absolute address on x86 and a count of
// instructions on arm64.
func branchTarget(f objFunc, i int) uint64 {
	fields := strings.Fields(f[i].text)
	arg := fields[len(fields)-1]
	if a, err := strconv.ParseUint(arg, 0, 64); err == nil && strings.HasPrefix(arg, "0x") {
		return a
	}
	if n, ok := strings.CutSuffix(arg, "(PC)"); ok {
		if d, err := strconv.Atoi(n); err == nil && i+d >= 0 && i+d < len(f) {
			return f[i+d].addr
		}
	}
	return 0
}

// reachesPanic reports whether the code from f[i] on, through no-ops and
// unconditional jumps, calls a runtime panic.
func reachesPanic(f objFunc, i int) bool {
	for steps := 0; steps < 8 && i >= 0 && i < len(f); steps++ {
		op, _, _ := strings.Cut(f[i].text, " ")
		switch {
		case strings.HasPrefix(f[i].text, "CALL runtime.panic"):
			return true
		case strings.HasPrefix(op, "NOP") || strings.HasPrefix(op, "MOV") && !strings.Contains(f[i].text, "("):
			i++ // arm64 moves the index into place
		case op == "JMP":
			i = f.index(branchTarget(f, i))
		default:
			return false
		}
	}
	return false
}

// sourceLines reads source lines, for TestConstantTimeCode's branches.
type sourceLines map[string][]string // file → lines

// srcPos is a source line: its function, file, number and trimmed text.
type srcPos struct {
	fn   string
	file string
	line int
	text string
}

// positions returns the source line of each address in exe: go tool
// addr2line gives the innermost inlined position.
func (s sourceLines) positions(t *testing.T, goTool, exe string, addrs []uint64) map[uint64]srcPos {
	t.Helper()
	pos := map[uint64]srcPos{}
	if len(addrs) == 0 {
		return pos
	}
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(goTool, "tool", "addr2line", exe)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	require.NoError(t, err, "go tool addr2line")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2*len(addrs) { // function, file:line
		t.Fatalf("go tool addr2line: %d lines for %d addresses", len(lines), len(addrs))
	}
	for k, a := range addrs {
		fl := lines[2*k+1]
		i := strings.LastIndex(fl, ":")
		n, err := strconv.Atoi(fl[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("go tool addr2line: %q", fl)
		}
		p := srcPos{fn: lines[2*k], file: fl[:i], line: n, text: "?"}
		text, ok := s[p.file]
		if !ok {
			if b, err := os.ReadFile(p.file); err == nil {
				text = strings.Split(string(b), "\n")
			}
			s[p.file] = text
		}
		if n >= 1 && n <= len(text) {
			line, _, _ := strings.Cut(text[n-1], "//")
			p.text = strings.TrimSpace(line)
		}
		pos[a] = p
	}
	return pos
}

// encodeBool is EncodeBool as a function value, which keeps a copy of it
// that is not inlined in the test binary for TestConstantTimeCode; so
// does fieldOps for the field operations, groupMessage and DecryptBool.
var (
	encodeBool = EncodeBool
	fieldOps   = []any{smallntt.Reduce, smallntt.Neg, smallntt.FromInt64, smallntt.ToInt64Centered,
		(*SecretKey).DecryptBool, groupMessage}
)

func TestEncodeBool(t *testing.T) {
	if got, want := encodeBool(true), torus.Encode(1, 8); got != want {
		t.Errorf("EncodeBool(true) = %#x, want %#x", got, want)
	}
	if got, want := encodeBool(false), torus.Encode(-1, 8); got != want {
		t.Errorf("EncodeBool(false) = %#x, want %#x", got, want)
	}
}
