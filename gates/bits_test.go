package gates

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func bitString(bits []bool) string {
	var sb strings.Builder
	for _, b := range bits {
		if b {
			sb.WriteByte('1')
		} else {
			sb.WriteByte('0')
		}
	}
	return sb.String()
}

// TestBitOrderWorkedExamples checks the worked examples of SOURCES.md §5.
func TestBitOrderWorkedExamples(t *testing.T) {
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	pt, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
	// aes_128: wires 0–7 hold 0x0f LSB first, 8–15 hold 0x0e, 120–127 hold 0x00.
	k := BytesBits(key, LSBFirst)
	if got := bitString(k[0:8]) + " " + bitString(k[8:16]) + " " + bitString(k[120:128]); got != "11110000 01110000 00000000" {
		t.Errorf("aes_128 key wires: %s", got)
	}
	if got := bitString(BytesBits(pt, LSBFirst)[0:16]); got != "1111111101110111" {
		t.Errorf("aes_128 plaintext wires 128–143: %s", got)
	}
	// AES-non-expanded: key wires 128–143 for key 00 01 … hold 00000000 00000001.
	if got := bitString(BytesBits(key, MSBFirst)[0:16]); got != "0000000000000001" {
		t.Errorf("AES-non-expanded key wires: %s", got)
	}
	if got := bitString(Uint64Bits(0b1011, 6)); got != "110100" {
		t.Errorf("Uint64Bits(0b1011, 6) = %s", got)
	}
}

func TestBitsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		v := rng.Uint64()
		w := rng.IntN(65)
		if w < 64 {
			v &= 1<<w - 1
		}
		if got := BitsUint64(Uint64Bits(v, w)); got != v {
			t.Fatalf("Uint64 round trip of %#x in %d bits: %#x", v, w, got)
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		for _, order := range []BitOrder{LSBFirst, MSBFirst} {
			bits := BytesBits(b, order)
			if got := BitsBytes(bits, order); !bytes.Equal(got, b) {
				t.Fatalf("%v: bytes %x → %x", order, b, got)
			}
			h := hex.EncodeToString(b)
			hb, err := HexBits(h, 8*len(b), order)
			if len(b) == 0 {
				require.Error(t, err, "HexBits of an empty string succeeded")
				continue
			}
			if err != nil || bitString(hb) != bitString(bits) {
				t.Fatalf("%v: HexBits(%s) = %s, %v; BytesBits %s", order, h, bitString(hb), err, bitString(bits))
			}
			if got := BitsHex(bits, order); got != h {
				t.Fatalf("%v: BitsHex = %s, want %s", order, got, h)
			}
		}
		// A uint64 in hex equals its bytes in LSB-first order.
		h := fmt.Sprintf("%016x", v)
		hb, _ := HexBits(h, 64, LSBFirst)
		if bitString(hb) != bitString(Uint64Bits(v, 64)) {
			t.Fatalf("HexBits(%s) ≠ Uint64Bits", h)
		}
		// MSBFirst reverses LSBFirst.
		hm, _ := HexBits(h, 64, MSBFirst)
		for j := range 64 {
			if hm[j] != hb[63-j] {
				t.Fatalf("MSBFirst is not the reverse of LSBFirst for %s", h)
			}
		}
	}
}

func TestHexBits(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		order BitOrder
		want  string // bits in wire order, or "error"
	}{
		{"1", 3, LSBFirst, "100"},
		{"0x1", 3, MSBFirst, "001"},
		{"0X_0_6", 3, LSBFirst, "011"},
		{"0x_f", 4, LSBFirst, "1111"},
		{"_1", 8, LSBFirst, "error"},
		{"1_", 8, LSBFirst, "error"},
		{"1__0", 8, LSBFirst, "error"},
		{"0x__1", 8, LSBFirst, "error"},
		{"_", 8, LSBFirst, "error"},
		{"0x0X1", 8, LSBFirst, "error"},
		{"0X0x_1", 8, LSBFirst, "error"},
		{"000000000000000000000000000000001", 1, LSBFirst, "1"},
		{"8", 3, LSBFirst, "error"},
		{"1ffffffff", 33, LSBFirst, strings.Repeat("1", 33)},
		{"2ffffffff", 33, LSBFirst, "error"},
		{"", 8, LSBFirst, "error"},
		{"0x", 8, LSBFirst, "error"},
		{"12g4", 16, LSBFirst, "error"},
		{"1", -1, LSBFirst, "error"},
		{"1", 3, BitOrder(7), "error"},
	} {
		bits, err := HexBits(tc.s, tc.width, tc.order)
		got := "error"
		if err == nil {
			got = bitString(bits)
		}
		if got != tc.want {
			t.Errorf("HexBits(%q, %d, %v) = %s (%v), want %s", tc.s, tc.width, tc.order, got, err, tc.want)
		}
	}
	if got := BitsHex([]bool{false, true, true, false, false, false, false, false, true}, LSBFirst); got != "106" {
		t.Errorf("BitsHex of 9 bits = %s, want 106", got)
	}
	if got := BitsBytes([]bool{true, false, false, false, false, false, false, false, true}, LSBFirst); !bytes.Equal(got, []byte{1, 1}) {
		t.Errorf("BitsBytes of 9 bits = %x, want 0101", got)
	}
}

// TestHexBitsWidthBound checks that a width no circuit input has is an
// error, as a negative one is, rather than an allocation of width bits
// up front: math.MaxInt panicked in make, and 2^40 would end the program
// out of memory.
func TestHexBitsWidthBound(t *testing.T) {
	for _, w := range []int{MaxWires + 1, math.MaxInt} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("HexBits(\"1\", %d) panicked: %v", w, r)
				}
			}()
			if _, err := HexBits("1", w, LSBFirst); err == nil || !strings.Contains(err.Error(), "MaxWires") {
				t.Errorf("HexBits(\"1\", %d): %v, want a width error", w, err)
			}
		}()
	}
	if bits, err := HexBits("1", MaxWires, MSBFirst); err != nil || len(bits) != MaxWires || !bits[MaxWires-1] {
		t.Errorf("HexBits(\"1\", MaxWires, MSBFirst): %d bits, %v", len(bits), err)
	}
}

func TestUint64BitsPanics(t *testing.T) {
	for _, f := range []func(){
		func() { Uint64Bits(0, 65) },
		func() { Uint64Bits(0, -1) },
		func() { BitsUint64(make([]bool, 65)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

func TestOp(t *testing.T) {
	// Truth tables as 8-bit masks over (a, b, c) = bits 0, 1, 2 of the index.
	want := map[Op]uint8{
		OpZero: 0x00, OpOne: 0xff, OpCopy: 0xaa, OpNOT: 0x55,
		OpAND: 0x88, OpNAND: 0x77, OpOR: 0xee, OpNOR: 0x11, OpXOR: 0x66, OpXNOR: 0x99,
		OpANDNY: 0x44, OpANDYN: 0x22, OpORNY: 0xdd, OpORYN: 0xbb, OpMUX: 0xd8,
		OpMAJ: 0xe8,
	}
	bootstraps := 0
	for op := Op(0); op < opCount+2; op++ {
		if !op.Valid() {
			if op.Arity() != 0 || op.Bootstraps() != 0 || op.Free() {
				t.Errorf("invalid %v has arity %d, bootstraps %d", op, op.Arity(), op.Bootstraps())
			}
			continue
		}
		var mask uint8
		for x := range 8 {
			if op.Eval(x&1 == 1, x&2 != 0, x&4 != 0) {
				mask |= 1 << x
			}
		}
		if mask != want[op] {
			t.Errorf("%v: truth table %#02x, want %#02x", op, mask, want[op])
		}
		bootstraps += op.Bootstraps()
		if op.Free() != (op.Bootstraps() == 0) {
			t.Errorf("%v: Free %v, Bootstraps %d", op, op.Free(), op.Bootstraps())
		}
		if name := op.String(); opByName[name] != op && name != "INV" && !op.Free() {
			t.Errorf("%v is not parsed under its own name", op)
		}
	}
	if len(want) != int(opCount)-1 || bootstraps != 11*1+2 {
		t.Errorf("%d ops, %d bootstraps in total", len(want), bootstraps)
	}
	defer func() {
		if recover() == nil {
			t.Error("Eval of an invalid op did not panic")
		}
	}()
	Op(0).Eval(true, true, true)
}

// hexBitsRef is HexBits by another route: math/big's reading of a Go hex
// literal (which takes the same underscores), the digits given the prefix
// they may lack; no prefix may not start with an underscore.
func hexBitsRef(s string, width int, order BitOrder) ([]bool, bool) {
	digits, prefixed := s, len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if prefixed {
		digits = s[2:]
	} else if strings.HasPrefix(s, "_") {
		return nil, false
	}
	v, ok := new(big.Int).SetString("0x"+digits, 0)
	if !ok || width < 0 || v.BitLen() > width {
		return nil, false
	}
	bits := make([]bool, width)
	for i := range width {
		bits[wireBit(i, width, order)] = v.Bit(i) == 1
	}
	return bits, true
}

// FuzzHexBits: HexBits accepts exactly what hexBitsRef does, with the same
// bits, and BitsHex reads back to the same bits.
func FuzzHexBits(f *testing.F) {
	for _, s := range []string{"0", "0x0", "0X1f", "dead_beef", "0x_1", "_1", "1_", "1__2", "0x", "", "0x0x1", "-1", "+1", " 1", "0xg", "ffffffffffffffffffff"} {
		f.Add(s, uint16(64), false)
	}
	f.Add("0x8000", uint16(16), true)
	f.Add("0x8000", uint16(15), true)
	f.Fuzz(func(t *testing.T, s string, w uint16, msb bool) {
		width, order := int(w%300), LSBFirst
		if msb {
			order = MSBFirst
		}
		got, err := HexBits(s, width, order)
		want, ok := hexBitsRef(s, width, order)
		if (err == nil) != ok {
			t.Fatalf("HexBits(%q, %d, %v): error %v; math/big accepts it: %v", s, width, order, err, ok)
		}
		if err != nil {
			return
		}
		if !slices.Equal(got, want) {
			t.Fatalf("HexBits(%q, %d, %v) = %s, want %s", s, width, order, bitString(got), bitString(want))
		}
		h := BitsHex(got, order)
		back, err := HexBits(h, width, order)
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("HexBits(BitsHex(HexBits(%q))) = %s, %v; want %s", s, bitString(back), err, bitString(got))
		}
	})
}

// TestHexDigit checks hexDigit's masks against a plain switch on every byte.
func TestHexDigit(t *testing.T) {
	for c := range 256 {
		ch := byte(c)
		want, wantOK := 0, 0
		switch {
		case ch >= '0' && ch <= '9':
			want, wantOK = int(ch-'0'), -1
		case ch >= 'a' && ch <= 'f':
			want, wantOK = int(ch-'a'+10), -1
		case ch >= 'A' && ch <= 'F':
			want, wantOK = int(ch-'A'+10), -1
		}
		if d, ok := hexDigit(ch); ok != wantOK || ok != 0 && d != want {
			t.Errorf("hexDigit(%q) = %d, %d; want %d, %d", ch, d, ok, want, wantOK)
		}
	}
}

// TestHexBitsErrorsKeepTheInput: an input may be a secret key, so the
// errors name a position, never the input or its characters.
func TestHexBitsErrorsKeepTheInput(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"0x12_3q5", 24, "byte 6 of 8"},
		{"abcde", 16, "a 5-digit hex number does not fit in 16 bits"},
		{"zbcde", 16, "byte 0 of 5"}, // a bad digit wins over the width
		{"ab__cd", 16, "underscores"},
		{"0x", 8, "no digits"},
	} {
		_, err := HexBits(c.s, c.width, LSBFirst)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("HexBits(%q, %d): %v, want an error with %q", c.s, c.width, err, c.want)
			continue
		}
		for _, part := range []string{c.s, strings.TrimPrefix(c.s, "0x")} {
			if part != "" && strings.Contains(err.Error(), part) {
				t.Errorf("HexBits(%q, %d): the error %q shows the input", c.s, c.width, err)
			}
		}
	}
}
