package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/goldfhe/goldfhe/gates"
)

// maxRecords bounds a table: the lookup circuit holds about a gate per key
// bit and a record, and a file must not make it as large as memory.
const maxRecords = 1 << 16

// maxWidth is the widest key or value: a uint64.
const maxWidth = 64

// record is one row of the server's table.
type record struct{ key, value uint64 }

// table is the server's plaintext table: distinct keys of keyBits bits,
// values of valueBits bits, in the order given.
type table struct {
	keyBits, valueBits int
	records            []record
}

// lookup returns the value of the record whose key is key and its index, or
// 0 and −1 when none is: the plaintext answer the encrypted one is checked
// against.
func (t *table) lookup(key uint64) (value uint64, index int) {
	for i, r := range t.records {
		if r.key == key {
			return r.value, i
		}
	}
	return 0, -1
}

// checkWidths reports key and value widths a table cannot have.
func checkWidths(keyBits, valueBits int) error {
	if keyBits < 1 || keyBits > maxWidth {
		return fmt.Errorf("-key-bits must be 1 to %d, not %d", maxWidth, keyBits)
	}
	if valueBits < 1 || valueBits > maxWidth {
		return fmt.Errorf("-value-bits must be 1 to %d, not %d", maxWidth, valueBits)
	}
	return nil
}

// mask returns the largest value of width bits.
func mask(width int) uint64 { return ^uint64(0) >> (64 - width) }

// generateTable returns n records of distinct random keys and random values,
// the same for the same seed and widths. n must be at most 2^keyBits and
// maxRecords.
func generateTable(n, keyBits, valueBits int, seed uint64) (*table, error) {
	if err := checkWidths(keyBits, valueBits); err != nil {
		return nil, err
	}
	most := maxRecords
	if keyBits < 16 {
		most = 1 << keyBits // every key
	}
	if n < 1 || n > most {
		return nil, fmt.Errorf("-records must be 1 to %d for %d-bit keys, not %d", most, keyBits, n)
	}
	r := rand.New(rand.NewPCG(seed, 0))
	t := &table{keyBits: keyBits, valueBits: valueBits}
	seen := make(map[uint64]bool, n)
	for len(t.records) < n {
		k := r.Uint64() & mask(keyBits)
		if seen[k] {
			continue // at most 2^16 keys: a free one is never far
		}
		seen[k] = true
		t.records = append(t.records, record{k, r.Uint64() & mask(valueBits)})
	}
	return t, nil
}

// parseTable reads a table file: one record a line, its key and its value
// as hex numbers (0x and _ separators allowed, as gates.HexBits reads them)
// separated by spaces or tabs; a # starts a comment, and blank lines are
// skipped. Keys must be distinct and fit keyBits, values fit valueBits.
// Errors name the file (name) and the line.
func parseTable(r io.Reader, name string, keyBits, valueBits int) (*table, error) {
	if err := checkWidths(keyBits, valueBits); err != nil {
		return nil, err
	}
	t := &table{keyBits: keyBits, valueBits: valueBits}
	lineOf := map[uint64]int{} // key → the line that gave it
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want a key and a value in hex, found %d fields", name, line, len(f))
		}
		key, err := parseHex(f[0], keyBits)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key: %w", name, line, err)
		}
		value, err := parseHex(f[1], valueBits)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: value: %w", name, line, err)
		}
		if l, ok := lineOf[key]; ok {
			return nil, fmt.Errorf("%s:%d: key %s is on line %d already", name, line, f[0], l)
		}
		if len(t.records) == maxRecords {
			return nil, fmt.Errorf("%s:%d: more than %d records", name, line, maxRecords)
		}
		lineOf[key] = line
		t.records = append(t.records, record{key, value})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(t.records) == 0 {
		return nil, fmt.Errorf("%s: no records", name)
	}
	return t, nil
}

// parseHex reads a hex number of at most width bits.
func parseHex(s string, width int) (uint64, error) {
	bits, err := gates.HexBits(s, width, gates.LSBFirst)
	if err != nil {
		return 0, err
	}
	return gates.BitsUint64(bits), nil
}

// hexWidth formats v in the hex digits a value of width bits takes.
func hexWidth(v uint64, width int) string {
	return fmt.Sprintf("%0*x", (width+3)/4, v)
}
