// Package circuits ships a few published Bristol circuits, unmodified, with
// what is needed to use them: the bit order of their inputs and outputs, what
// each value means, and one worked example each. Provenance (repository,
// commit, blob id, SHA-256) is in SOURCES.md and the licenses, which must be
// reproduced with any program that embeds these files, in LICENSES.md; both
// are embedded too (FS).
//
// The Bristol Fashion files come from SCALE-MAMBA (KU Leuven COSIC), the old
// format files from emp-tool (the original circuits of Tillich and Smart) and
// MOTION (TU Darmstadt).
package circuits

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/goldfhe/goldfhe/gates"
)

//go:embed *.txt *.bristol SOURCES.md LICENSES.md
var files embed.FS

// FS returns the embedded folder: the circuit files, SOURCES.md and
// LICENSES.md.
func FS() fs.FS { return files }

// Info describes one shipped circuit.
type Info struct {
	Name    string         // e.g. "adder64"; the file name without its extension
	File    string         // file name in FS
	Summary string         // what the circuit computes
	Inputs  []string       // meaning of each input value, in wire order
	Outputs []string       // meaning of each output value, in wire order
	Order   gates.BitOrder // wire order of every input and output value

	// Example is one known-answer vector, in hex (the value as an integer,
	// or the byte string's usual hex): Example.In[i] for input i and
	// Example.Out[i] for output i.
	Example struct{ In, Out []string }
}

func info(name, file, summary string, in, out []string, order gates.BitOrder, exIn, exOut []string) Info {
	i := Info{Name: name, File: file, Summary: summary, Inputs: in, Outputs: out, Order: order}
	i.Example.In, i.Example.Out = exIn, exOut
	return i
}

var (
	u64ab = []string{"a: uint64", "b: uint64"}
	u64   = []string{"uint64"}
	list  = []Info{
		info("adder64", "adder64.txt", "64-bit addition, (a+b) mod 2^64", u64ab, u64, gates.LSBFirst,
			[]string{"0123456789abcdef", "fedcba9876543210"}, []string{"ffffffffffffffff"}),
		info("sub64", "sub64.txt", "64-bit subtraction, (a−b) mod 2^64", u64ab, u64, gates.LSBFirst,
			[]string{"0123456789abcdef", "fedcba9876543210"}, []string{"02468acf13579bdf"}),
		info("neg64", "neg64.txt", "64-bit negation, (−a) mod 2^64", []string{"a: uint64"}, u64, gates.LSBFirst,
			[]string{"0123456789abcdef"}, []string{"fedcba9876543211"}),
		info("mult64", "mult64.txt", "64-bit multiplication, (a·b) mod 2^64", u64ab, u64, gates.LSBFirst,
			[]string{"0123456789abcdef", "fedcba9876543210"}, []string{"2236d88fe5618cf0"}),
		info("mult2_64", "mult2_64.txt", "unsigned 64×64 → 128-bit multiplication", u64ab,
			[]string{"high 64 bits of a·b", "low 64 bits of a·b"}, gates.LSBFirst,
			[]string{"0123456789abcdef", "fedcba9876543210"}, []string{"0121fa00ad77d742", "2236d88fe5618cf0"}),
		info("zero_equal", "zero_equal.txt", "zero test, [a == 0]", []string{"a: uint64"}, []string{"1 bit"}, gates.LSBFirst,
			[]string{"0000000000000000"}, []string{"1"}),
		info("FP-lt", "FP-lt.txt", "IEEE-754 double comparison, [a < b] in bit 0",
			[]string{"a: float64 bit pattern", "b: float64 bit pattern"}, []string{"[a < b] in bit 0, bits 1–63 zero"}, gates.LSBFirst,
			[]string{"3ff0000000000000", "4000000000000000"}, []string{"0000000000000001"}),
		info("int_gt64_size", "int_gt64_size.bristol", "signed 64-bit comparison, [a > b] in bit 0 (old format)",
			[]string{"a: int64", "b: int64"}, []string{"[a > b] in bit 0, bits 1–63 zero"}, gates.LSBFirst,
			[]string{"7fffffffffffffff", "8000000000000000"}, []string{"0000000000000001"}),
		info("adder_32bit", "adder_32bit.txt", "32-bit addition with carry out, a+b in 33 bits (old format)",
			[]string{"a: uint32", "b: uint32"}, []string{"a+b: 33 bits"}, gates.LSBFirst,
			[]string{"ffffffff", "ffffffff"}, []string{"1fffffffe"}),
		info("aes_128", "aes_128.txt", "AES-128 encryption of one block, key schedule inside",
			[]string{"key: 16 bytes", "plaintext: 16 bytes"}, []string{"ciphertext: 16 bytes"}, gates.LSBFirst,
			[]string{"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"},
			[]string{"69c4e0d86a7b0430d8cdb78070b4c55a"}),
		info("AES-non-expanded", "AES-non-expanded.txt", "AES-128 encryption of one block (old format, plaintext first, MSB first)",
			[]string{"plaintext: 16 bytes", "key: 16 bytes"}, []string{"ciphertext: 16 bytes"}, gates.MSBFirst,
			[]string{"00112233445566778899aabbccddeeff", "000102030405060708090a0b0c0d0e0f"},
			[]string{"69c4e0d86a7b0430d8cdb78070b4c55a"}),
		info("sha256", "sha256.txt", "SHA-256 compression function with feed-forward, no padding",
			[]string{"block: 64 bytes, already padded", "chaining value H0‖…‖H7: 32 bytes"},
			[]string{"new chaining value: 32 bytes"}, gates.LSBFirst,
			[]string{"61626380000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000018",
				"6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19"},
			[]string{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}),
	}
	loaded sync.Map // name → func() (*gates.Circuit, error)
)

// List returns the shipped circuits.
func List() []Info {
	out := make([]Info, len(list))
	for i, c := range list {
		out[i] = c
		out[i].Inputs = append([]string(nil), c.Inputs...)
		out[i].Outputs = append([]string(nil), c.Outputs...)
		out[i].Example.In = append([]string(nil), c.Example.In...)
		out[i].Example.Out = append([]string(nil), c.Example.Out...)
	}
	return out
}

// Lookup returns the circuit called name (case-insensitive, with or without
// its file extension).
func Lookup(name string) (Info, bool) {
	for _, c := range List() {
		if strings.EqualFold(name, c.Name) || strings.EqualFold(name, c.File) {
			return c, true
		}
	}
	return Info{}, false
}

// Load parses and validates the circuit called name (see Lookup). Each
// circuit is parsed once; the result is shared, which is safe because a
// *gates.Circuit is immutable.
func Load(name string) (*gates.Circuit, error) {
	c, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("circuits: no circuit called %q", name)
	}
	f, _ := loaded.LoadOrStore(c.Name, sync.OnceValues(func() (*gates.Circuit, error) {
		r, err := files.Open(c.File)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		circ, err := gates.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("circuits: %s: %w", c.File, err)
		}
		return circ, nil
	}))
	return f.(func() (*gates.Circuit, error))()
}
