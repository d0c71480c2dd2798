package gates

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// BitOrder says how a value of n bits is laid out on a circuit's n wires
// base … base+n−1. A byte string is read as one big-endian integer (its usual
// hex reading), so both orders apply to byte strings too. HexBits refuses
// any other value; BytesBits, BitsBytes and BitsHex, which return no
// error, read any value but MSBFirst as LSBFirst.
type BitOrder uint8

const (
	// LSBFirst puts bit j of the value on wire base+j. It is the order of
	// every Bristol Fashion circuit of SCALE-MAMBA (integers, AES, SHA-256)
	// and of the old adder and comparator files: for a 16-byte AES block the
	// first wire is the least significant bit of the last byte.
	LSBFirst BitOrder = iota
	// MSBFirst puts bit n−1−j of the value on wire base+j: wire 8i+k carries
	// bit 7−k of byte i. It is the order of the old AES-non-expanded.txt.
	MSBFirst
)

func (o BitOrder) String() string {
	switch o {
	case LSBFirst:
		return "LSB first"
	case MSBFirst:
		return "MSB first"
	}
	return fmt.Sprintf("BitOrder(%d)", uint8(o))
}

// Uint64Bits returns the low width bits of v, least significant first (the
// LSBFirst wire order). width must be in [0, 64]; it panics otherwise.
func Uint64Bits(v uint64, width int) []bool {
	if width < 0 || width > 64 {
		panic(fmt.Sprintf("gates: Uint64Bits width %d outside [0, 64]", width))
	}
	bits := make([]bool, width)
	for j := range bits {
		bits[j] = v>>j&1 == 1
	}
	return bits
}

// BitsUint64 is the inverse of Uint64Bits: bit j of the result is bits[j].
// len(bits) must be at most 64; it panics otherwise (DecryptUint checks the
// count and returns an error).
func BitsUint64(bits []bool) uint64 {
	if len(bits) > 64 {
		panic(fmt.Sprintf("gates: BitsUint64 of %d bits", len(bits)))
	}
	var v uint64
	for j, b := range bits {
		v |= uint64(bitOf(b)) << j // decrypted bits: no branch on them
	}
	return v
}

// bitOf is b as 0 or 1. Go compiles this form to a zero extension of b's
// byte, not a branch, inlined or not (the form with two returns branches
// when not inlined): the Bits… decoders read decrypted bits, which a branch
// would show to whoever times them.
func bitOf(b bool) byte {
	var x byte
	if b {
		x = 1
	}
	return x
}

// BytesBits returns the 8·len(b) bits of the byte string b, read as a
// big-endian integer, in the given wire order. With LSBFirst, bits[0] is the
// least significant bit of the last byte; with MSBFirst, the most significant
// bit of the first byte.
func BytesBits(b []byte, order BitOrder) []bool {
	n := 8 * len(b)
	bits := make([]bool, n)
	for j := range n {
		// Integer bit i sits in byte len(b)−1−i/8 at position i%8.
		i := wireBit(j, n, order)
		bits[j] = b[len(b)-1-i/8]>>(i%8)&1 == 1
	}
	return bits
}

// BitsBytes is the inverse of BytesBits: it reads the bits in the given order
// as an integer and returns it as a big-endian byte string of
// ⌈len(bits)/8⌉ bytes.
func BitsBytes(bits []bool, order BitOrder) []byte {
	n := len(bits)
	b := make([]byte, (n+7)/8)
	for j, bit := range bits {
		i := wireBit(j, n, order)
		b[len(b)-1-i/8] |= bitOf(bit) << (i % 8)
	}
	return b
}

// wireBit returns the integer bit that wire j of an n-bit value carries.
func wireBit(j, n int, order BitOrder) int {
	if order == MSBFirst {
		return n - 1 - j
	}
	return j
}

// HexBits reads s as a hexadecimal integer (an optional 0x prefix,
// underscores as in Go's literals: single, between digits or after the
// prefix; any number of leading zeros) and
// returns its width bits in the given wire order. The value must fit in width
// bits, and width in [0, MaxWires] (a circuit input's at most). For a byte
// string of width/8 bytes this is the same as BytesBits of its hex
// decoding.
//
// s may be a secret (a circuit's key input): HexBits does not branch on its
// digits' values, and its errors name a position in s, never s or its
// characters, so that a mistyped key does not end up in a log. Of a bad
// digit and a value too wide, the bad digit is reported (the leftmost).
func HexBits(s string, width int, order BitOrder) ([]bool, error) {
	digits, pre := s, 0
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits, pre = s[2:], 2 // one prefix at most: "0x0X1" is not a number
	}
	// Underscores as in Go's literals: single, between digits or right
	// after the prefix.
	if strings.HasPrefix(digits, "_") && len(digits) == len(s) || strings.HasSuffix(digits, "_") || strings.Contains(digits, "__") {
		return nil, errors.New("gates: not a hex number: underscores go singly between digits")
	}
	digits = strings.ReplaceAll(digits, "_", "")
	if digits == "" {
		return nil, errors.New("gates: not a hex number: no digits")
	}
	if width < 0 || width > MaxWires {
		// The bits are allocated up front: a width of 2^40 asked for a
		// terabyte and ended the program out of memory, one past what
		// make takes panicked. No circuit has a wider input.
		return nil, fmt.Errorf("gates: width %d outside [0, MaxWires = %d]", width, MaxWires)
	}
	if order != LSBFirst && order != MSBFirst {
		return nil, fmt.Errorf("gates: unknown bit order %d", order)
	}
	// The digits may be a secret input (an AES key): no branch on their
	// values. Every bit is written, and a bad digit or a set bit past
	// width is noted and reported after the loop.
	bits := make([]bool, width)
	var bad, over int
	for k := range len(digits) {
		d, ok := hexDigit(digits[len(digits)-1-k]) // k-th digit from the least significant
		bad |= ^ok
		for t := range 4 {
			if i := 4*k + t; i < width { // positions are public
				bits[wireBit(i, width, order)] = d>>t&1 == 1
			} else {
				over |= d >> t & 1
			}
		}
	}
	if bad != 0 {
		for i := pre; i < len(s); i++ {
			if _, ok := hexDigit(s[i]); ok == 0 && s[i] != '_' {
				return nil, fmt.Errorf("gates: not a hex number: byte %d of %d is not a hex digit", i, len(s))
			}
		}
	}
	if over != 0 {
		return nil, fmt.Errorf("gates: a %d-digit hex number does not fit in %d bits", len(digits), width)
	}
	return bits, nil
}

// signShift shifts an int's sign bit down to every bit: x >> signShift is −1
// for x < 0 and 0 otherwise, on 32- and 64-bit platforms alike.
const signShift = strconv.IntSize - 1

// hexDigit returns the value of the hex digit ch and ok = −1 (all ones), or
// ok = 0 if ch is not one, by masks rather than comparisons that branch.
func hexDigit(ch byte) (d, ok int) {
	dec := int(ch) - '0'
	lc := int(ch|0x20) - 'a'                   // 'A'–'F' to 'a'–'f'; no other byte lands there
	isDec := ^((dec | (9 - dec)) >> signShift) // 0 ≤ dec ≤ 9
	isHex := ^((lc | (5 - lc)) >> signShift)   // 0 ≤ lc ≤ 5
	return dec&isDec | (lc+10)&isHex, isDec | isHex
}

// BitsHex is the inverse of HexBits: the bits, read in the given order as an
// integer, in ⌈len(bits)/4⌉ lower-case hex digits, and "0" for no bits
// (which HexBits reads back as no bits).
func BitsHex(bits []bool, order BitOrder) string {
	n := len(bits)
	if n == 0 {
		return "0"
	}
	out := make([]byte, (n+3)/4)
	for j, bit := range bits {
		i := wireBit(j, n, order)
		out[len(out)-1-i/4] |= bitOf(bit) << (i % 4)
	}
	for k, d := range out {
		// '0' + d, or 'a' + d − 10 past 9, by a mask rather than a table
		// indexed by the digit.
		out[k] = '0' + d + byte(39&((9-int(d))>>signShift))
	}
	return string(out)
}
