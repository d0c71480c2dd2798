package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// formatTable writes t as parseTable reads it.
func formatTable(t *table) string {
	var b strings.Builder
	for _, r := range t.records {
		fmt.Fprintf(&b, "%s %s\n", hexWidth(r.key, t.keyBits), hexWidth(r.value, t.valueBits))
	}
	return b.String()
}

func TestParseTable(t *testing.T) {
	for _, tc := range []struct {
		in         string
		kb, vb     int
		want       []record // nil: an error
		errContain string
	}{
		{"1 2\n", 16, 16, []record{{1, 2}}, ""},
		{"# comment\n\n  0x00ff\t0X_1\t# trailing\r\nffff ffffffff\n", 16, 32, []record{{0xff, 1}, {0xffff, 0xffffffff}}, ""},
		{"ffffffffffffffff 0\n", 64, 1, []record{{1<<64 - 1, 0}}, ""},
		{"1 2 3\n", 16, 16, nil, "t.txt:1: want a key and a value in hex, found 3 fields"},
		{"\n1\n", 16, 16, nil, "t.txt:2: want a key and a value in hex, found 1 fields"},
		{"10 0\n", 4, 4, nil, "t.txt:1: key: gates: a 2-digit hex number does not fit in 4 bits"},
		{"1 g\n", 4, 4, nil, "t.txt:1: value: gates: not a hex number"},
		{"1 2\n2 3\n0x1 4\n", 4, 4, nil, "t.txt:3: key 0x1 is on line 1 already"},
		{"# nothing\n", 4, 4, nil, "t.txt: no records"},
		{"", 4, 4, nil, "t.txt: no records"},
		{"1 2\n", 0, 4, nil, "-key-bits must be 1 to 64, not 0"},
		{"1 2\n", 4, 65, nil, "-value-bits must be 1 to 64, not 65"},
		{strings.Repeat("1", 70000) + " 2\n", 64, 64, nil, "t.txt:1: bufio.Scanner: token too long"},
	} {
		got, err := parseTable(strings.NewReader(tc.in), "t.txt", tc.kb, tc.vb)
		switch {
		case tc.want == nil && (err == nil || !strings.Contains(err.Error(), tc.errContain)):
			t.Errorf("%.40q: error %v, want one containing %q", tc.in, err, tc.errContain)
		case tc.want != nil && err != nil:
			t.Errorf("%.40q: %v", tc.in, err)
		case tc.want != nil && !slices.Equal(got.records, tc.want):
			t.Errorf("%.40q: %v, want %v", tc.in, got.records, tc.want)
		}
	}
}

// TestParseTableLimit: a file of more than maxRecords records is refused
// at the first record past the limit.
func TestParseTableLimit(t *testing.T) {
	full, err := generateTable(maxRecords, 16, 1, 1)
	require.NoError(t, err)
	in := formatTable(full)
	if _, err := parseTable(strings.NewReader(in), "t.txt", 16, 1); err != nil {
		t.Fatalf("%d records: %v", maxRecords, err)
	}
	_, err = parseTable(strings.NewReader(in+"10000 0\n"), "t.txt", 17, 1)
	if want := fmt.Sprintf("t.txt:%d: more than %d records", maxRecords+1, maxRecords); err == nil || err.Error() != want {
		t.Errorf("%d records: error %v, want %q", maxRecords+1, err, want)
	}
}

// TestGenerateTable: distinct keys of the width asked, values that fit,
// the same table for the same seed and another for another seed.
func TestGenerateTable(t *testing.T) {
	for _, tc := range []struct{ n, kb, vb int }{{32, 16, 16}, {16, 4, 8}, {1, 1, 1}, {2, 1, 64}, {100, 64, 32}} {
		a, err := generateTable(tc.n, tc.kb, tc.vb, 7)
		require.NoError(t, err)
		b, _ := generateTable(tc.n, tc.kb, tc.vb, 7)
		c, _ := generateTable(tc.n, tc.kb, tc.vb, 8)
		if !slices.Equal(a.records, b.records) {
			t.Errorf("%v: two tables from one seed differ", tc)
		}
		if tc.n > 2 && slices.Equal(a.records, c.records) {
			t.Errorf("%v: seeds 7 and 8 give the same table", tc)
		}
		checkTable(t, a, tc.kb, tc.vb)
		if len(a.records) != tc.n {
			t.Errorf("%v: %d records", tc, len(a.records))
		}
	}
}

// checkTable fails t unless tb's keys are distinct and fit kb bits and its
// values fit vb.
func checkTable(t *testing.T, tb *table, kb, vb int) {
	t.Helper()
	seen := map[uint64]bool{}
	for _, r := range tb.records {
		if r.key&^mask(kb) != 0 || r.value&^mask(vb) != 0 || seen[r.key] {
			t.Fatalf("record %x → %x: a repeated key, or wider than %d → %d bits", r.key, r.value, kb, vb)
		}
		seen[r.key] = true
	}
	if tb.keyBits != kb || tb.valueBits != vb || len(tb.records) == 0 || len(tb.records) > maxRecords {
		t.Fatalf("table of %d records, widths %d → %d, want %d → %d", len(tb.records), tb.keyBits, tb.valueBits, kb, vb)
	}
}

// FuzzParseTable: any input gives a table or an error, never a panic; a
// table has distinct keys that fit, at most maxRecords records, and reads
// back the same from its formatting.
func FuzzParseTable(f *testing.F) {
	f.Add([]byte("# key value\n0x1a2b 0x00ff\n0007 1234\n"), uint8(16), uint8(16))
	f.Add([]byte("1 2\n1 3\n"), uint8(4), uint8(4))
	f.Add([]byte("ffffffffffffffff 1_0\r\n\n#\n"), uint8(64), uint8(8))
	f.Fuzz(func(t *testing.T, data []byte, kb, vb uint8) {
		keyBits, valueBits := 1+int(kb)%maxWidth, 1+int(vb)%maxWidth
		tb, err := parseTable(strings.NewReader(string(data)), "fuzz", keyBits, valueBits)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkTable(t, tb, keyBits, valueBits)
		again, err := parseTable(strings.NewReader(formatTable(tb)), "again", keyBits, valueBits)
		if err != nil || !slices.Equal(again.records, tb.records) {
			t.Fatalf("formatted and read back: %v, %v", again, err)
		}
	})
}
