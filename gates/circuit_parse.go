package gates

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// maxLineBytes bounds one netlist line; longer lines are an error.
const maxLineBytes = 1 << 16

// Parse reads a circuit in Bristol Fashion or in the old Bristol format and
// validates it (see NewCircuit). The format is detected from the header: in
// Bristol Fashion the third non-blank line lists the output widths and holds
// only numbers, while in the old format it is already a gate line, which
// ends with the gate's name.
//
// The header fields must be on their own lines and each gate on one line, as
// in every published file; blank lines, extra spaces and CR LF line ends are
// accepted. Gates: XOR, AND, INV (also NOT), EQ with a literal 0 or 1, EQW (a
// copy), MAND (2n inputs, n outputs: out[j] = in[j] AND in[j+n], expanded into
// n AND gates), and as extensions OR and the other Op names (NAND, NOR, XNOR,
// ANDNY, ANDYN, ORNY, ORYN, MUX and MAJ with three inputs). A gate may read the same
// wire twice (it is then evaluated as the gate of its distinct inputs:
// Circuit.Bootstraps).
//
// Every problem of the netlist is reported as a *CircuitError naming the
// line: a truncated file, counts that do not match, wires out of range,
// written twice or read before they are written, unknown gates, wires
// neither input nor written. A failed read of r is an error that wraps
// the reader's.
func Parse(r io.Reader) (*Circuit, error) {
	if r == nil {
		return nil, errors.New("gates: Parse: nil reader")
	}
	p := &parser{sc: bufio.NewScanner(r)}
	p.sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	return p.parse()
}

// ParseFile reads and validates the circuit in the named file; see Parse.
func ParseFile(name string) (*Circuit, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("gates: %w", err)
	}
	defer f.Close()
	c, err := Parse(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

type parser struct {
	sc      *bufio.Scanner
	line    int      // number of the last line read
	fields  [][]byte // fields of the pushed-back line, if any
	fline   int      // its line number
	pending bool
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &CircuitError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// next returns the fields of the next non-blank line and its number; at the
// end of the input it returns nil, with an error if reading failed.
func (p *parser) next() ([][]byte, int, error) {
	if p.pending {
		p.pending = false
		return p.fields, p.fline, nil
	}
	for p.sc.Scan() {
		p.line++
		if f := bytes.Fields(p.sc.Bytes()); len(f) > 0 {
			return f, p.line, nil
		}
	}
	if err := p.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, p.line + 1, p.errf(p.line+1, "line longer than %d bytes with its line end", maxLineBytes)
		}
		return nil, p.line, fmt.Errorf("gates: reading circuit after line %d: %w", p.line, err)
	}
	return nil, p.line, nil
}

func (p *parser) unread(f [][]byte, line int) { p.fields, p.fline, p.pending = f, line, true }

// number parses a decimal field: digits only, at most MaxWires·2.
func number(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		// Checked at every digit: ten digits overflow a 32-bit int.
		if n = n*10 + int(ch-'0'); n > 2*MaxWires {
			return 0, false
		}
	}
	return n, true
}

func allNumbers(f [][]byte) bool {
	for _, b := range f {
		if _, ok := number(b); !ok {
			return false
		}
	}
	return true
}

func (p *parser) numbers(f [][]byte, line int, what string) ([]int, error) {
	out := make([]int, len(f))
	for i, b := range f {
		n, ok := number(b)
		if !ok {
			return nil, p.errf(line, "%s: %q is not a number in [0, %d]", what, b, 2*MaxWires)
		}
		out[i] = n
	}
	return out, nil
}

func (p *parser) parse() (*Circuit, error) {
	var hl headerLines
	f, line, err := p.next()
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, p.errf(line+1, "empty circuit file")
	}
	hl.counts = line
	if len(f) != 2 {
		return nil, p.errf(line, "the first line must be \"<gates> <wires>\", found %d fields", len(f))
	}
	counts, err := p.numbers(f, line, "header")
	if err != nil {
		return nil, err
	}
	ngates, nwires := counts[0], counts[1]
	if ngates > MaxGates {
		return nil, p.errf(line, "%d gates exceed the limit of %d", ngates, MaxGates)
	}
	if nwires > MaxWires {
		return nil, p.errf(line, "%d wires exceed the limit of %d", nwires, MaxWires)
	}

	f2, line2, err := p.next()
	if err != nil {
		return nil, err
	}
	if f2 == nil {
		return nil, p.errf(line2+1, "file ends inside the header")
	}
	hl.inputs = line2
	f3, line3, err := p.next()
	if err != nil {
		return nil, err
	}
	var (
		format          Format
		inputs, outputs []int
	)
	if f3 != nil && allNumbers(f3) {
		format = BristolFashion
		hl.outputs = line3
		if inputs, err = p.valueList(f2, line2, "input"); err != nil {
			return nil, err
		}
		if outputs, err = p.valueList(f3, line3, "output"); err != nil {
			return nil, err
		}
	} else {
		format = BristolOld
		hl.outputs = line2
		if f3 != nil {
			p.unread(f3, line3)
		}
		if len(f2) != 3 {
			return nil, p.errf(line2, "expected \"<input 1 bits> <input 2 bits> <output bits>\" (old format) or a Bristol Fashion input list followed by an output list, found %d fields and then a gate", len(f2))
		}
		v, err := p.numbers(f2, line2, "old-format header")
		if err != nil {
			return nil, err
		}
		inputs, outputs = v[:2], v[2:]
	}

	gates := make([]Gate, 0, min(ngates, 1<<10)) // the count is the header's word until the gates are read
	for gi := range ngates {
		f, line, err := p.next()
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, p.errf(line, "file ends after %d of %d gates (truncated?)", gi, ngates)
		}
		if gates, err = p.gate(gates, f, line, nwires); err != nil {
			return nil, err
		}
		if len(gates) > MaxGates { // MAND lines expand: bound the gates, not only the lines
			return nil, p.errf(line, "more than %d gates (MaxGates) after %d gate lines", MaxGates, gi+1)
		}
	}
	f, line, err = p.next()
	if err != nil {
		return nil, err
	}
	if f != nil {
		return nil, p.errf(line, "more gate lines than the %d the header announces", ngates)
	}
	return build(format, nwires, inputs, outputs, gates, hl)
}

// valueList parses "<count> <width 1> … <width count>".
func (p *parser) valueList(f [][]byte, line int, what string) ([]int, error) {
	v, err := p.numbers(f, line, what+" list")
	if err != nil {
		return nil, err
	}
	if v[0] != len(v)-1 {
		return nil, p.errf(line, "the %s list announces %d values but gives %d widths", what, v[0], len(v)-1)
	}
	for i, n := range v[1:] {
		if n == 0 {
			return nil, p.errf(line, "%s %d has width 0", what, i+1)
		}
	}
	return v[1:], nil
}

var opByName = map[string]Op{
	"XOR": OpXOR, "AND": OpAND, "INV": OpNOT, "NOT": OpNOT, "EQW": OpCopy,
	"OR": OpOR, "NAND": OpNAND, "NOR": OpNOR, "XNOR": OpXNOR,
	"ANDNY": OpANDNY, "ANDYN": OpANDYN, "ORNY": OpORNY, "ORYN": OpORYN, "MUX": OpMUX,
	"MAJ": OpMAJ,
}

// gate parses one gate line "<nin> <nout> <in…> <out…> <OP>" and appends the
// gates it stands for.
func (p *parser) gate(gates []Gate, f [][]byte, line, nwires int) ([]Gate, error) {
	if len(f) < 4 {
		return nil, p.errf(line, "gate line has %d fields; a gate needs at least 4", len(f))
	}
	name := string(f[len(f)-1])
	if _, ok := opByName[name]; !ok && name != "EQ" && name != "MAND" {
		// Before the numbers: a line whose last field is not a gate (a
		// trailing comment, a missing name) is told so, not that its
		// name is not a number.
		return nil, p.errf(line, "unknown gate %q: a gate line ends with its operation (XOR, AND, INV, EQ, EQW, MAND, …)", name)
	}
	nums, err := p.numbers(f[:len(f)-1], line, name+" gate")
	if err != nil {
		return nil, err
	}
	nin, nout := nums[0], nums[1]
	wires := nums[2:]
	if nin+nout != len(wires) {
		return nil, p.errf(line, "%s gate announces %d inputs and %d outputs but lists %d wires", name, nin, nout, len(wires))
	}
	in, out := wires[:nin], wires[nin:]
	// Wires are checked for range here (EQ's input is a literal) and for
	// order in build.
	checkOut := func() error {
		for _, w := range out {
			if w >= nwires {
				return p.errf(line, "%s gate writes wire %d, outside [0, %d)", name, w, nwires)
			}
		}
		return nil
	}
	switch name {
	case "EQ":
		if nin != 1 || nout != 1 {
			return nil, p.errf(line, "EQ gate needs 1 input and 1 output, has %d and %d", nin, nout)
		}
		if in[0] > 1 {
			return nil, p.errf(line, "EQ gate constant must be 0 or 1, is %d", in[0])
		}
		if err := checkOut(); err != nil {
			return nil, err
		}
		op := OpZero
		if in[0] == 1 {
			op = OpOne
		}
		return append(gates, Gate{Op: op, In: [3]int{-1, -1, -1}, Out: out[0], Line: line}), nil
	case "MAND":
		if nout == 0 || nin != 2*nout {
			return nil, p.errf(line, "MAND gate needs 2n inputs and n ≥ 1 outputs, has %d and %d", nin, nout)
		}
		if err := checkOut(); err != nil {
			return nil, err
		}
		// Its ANDs run at once, so none may read another's output: one
		// pass over a sorted copy of the outputs, since a line may hold
		// thousands of each (a nested loop took 160 ms a 64 KiB line).
		sorted := slices.Clone(out)
		slices.Sort(sorted)
		for _, w := range in {
			if w >= nwires {
				return nil, p.errf(line, "MAND gate reads wire %d, outside [0, %d)", w, nwires)
			}
			if _, own := slices.BinarySearch(sorted, w); own {
				return nil, p.errf(line, "MAND gate reads wire %d, one of its own outputs", w)
			}
		}
		for j := range nout {
			gates = append(gates, Gate{Op: OpAND, In: [3]int{in[j], in[j+nout], -1}, Out: out[j], Line: line})
		}
		return gates, nil
	}
	op := opByName[name] // known: checked above
	if nin != op.Arity() || nout != 1 {
		return nil, p.errf(line, "%s gate needs %d inputs and 1 output, has %d and %d", name, op.Arity(), nin, nout)
	}
	g := Gate{Op: op, In: [3]int{-1, -1, -1}, Out: out[0], Line: line}
	for k, w := range in {
		if w >= nwires {
			return nil, p.errf(line, "%s gate reads wire %d, outside [0, %d)", name, w, nwires)
		}
		g.In[k] = w
	}
	if err := checkOut(); err != nil {
		return nil, err
	}
	return append(gates, g), nil
}
