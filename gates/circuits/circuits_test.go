package circuits_test

import (
	"crypto/aes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/stretchr/testify/require"
)

// The files are byte-for-byte copies of the published ones: these are the
// SHA-256 sums of SOURCES.md §1.
var fileSums = map[string]string{
	"adder64.txt":           "2af215910deb16674a9c0c9fc08b70dc27a210c3eb678dd9419d98e9154dd5e3",
	"sub64.txt":             "101ddefa1df1d6557684de24bf6599d4a578dc53eeba18554d0715f7d7c0f625",
	"neg64.txt":             "78065cfc35998e1e5f4cbd6be4093cae2b68f0c825958f2313ba7eed7e124c8a",
	"mult64.txt":            "f8de307ac23757225d300a5a65db12e72d4eaef2ce0bd307b8c44f24ae007eda",
	"mult2_64.txt":          "bbfb98ae97dbc7ac31b605e740486297efa85c052b07caffabc28f9710a75a47",
	"zero_equal.txt":        "e942f8054c30b3bc8396383a838404c1597d80f5d1ba2d2e28cb212eda4d239f",
	"FP-lt.txt":             "949fcd093fe17ea7acd2cc6606c68afc511d4c0d86dabb33b6625281e9a7e3cd",
	"aes_128.txt":           "40423a0cdaf5d4d34aba872c12660f115dc25c12eea6e24a9304578e79df6d04",
	"sha256.txt":            "bd0a91bb7e97bb60c1468fe8caecc546af3f832bd4152d9c8c4e7527412dd11d",
	"adder_32bit.txt":       "9a34e061782c0e6437c90c7f89ed62a64da5b87ee11aadd105a422050dd18961",
	"AES-non-expanded.txt":  "0260ae86ddd882cb6793a0dec30ab50444c86b6ef553056fa89a9555a9ea8d00",
	"int_gt64_size.bristol": "88c8337676320a6ddddcbc7788310e78b335e25be6bc8ab0502b8e2447716aaf",
}

func TestFilesUnmodified(t *testing.T) {
	if len(circuits.List()) != len(fileSums) {
		t.Fatalf("%d circuits listed, %d pinned", len(circuits.List()), len(fileSums))
	}
	for _, c := range circuits.List() {
		data, err := fs.ReadFile(circuits.FS(), c.File)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != fileSums[c.File] {
			t.Errorf("%s: sha256 %s, want %s (SOURCES.md)", c.File, got, fileSums[c.File])
		}
	}
	for _, name := range []string{"SOURCES.md", "LICENSES.md"} {
		if _, err := fs.Stat(circuits.FS(), name); err != nil {
			t.Errorf("%s not embedded: %v", name, err)
		}
	}
}

// TestStructure checks the counts of SOURCES.md §2; its "binary depth" (XOR
// and AND only) is the bootstrap depth.
func TestStructure(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		format                    gates.Format
		gates, wires              int
		in, out                   []int
		xor, and, inv, eqw, depth int
		// same: gates that read one sample twice, which cost no bootstrap
		// (FP-lt's and int_gt64_size's XOR of wire 0 with itself: 0).
		same int
	}{
		{"adder64", gates.BristolFashion, 376, 504, []int{64, 64}, []int{64}, 313, 63, 0, 0, 188, 0},
		{"sub64", gates.BristolFashion, 439, 567, []int{64, 64}, []int{64}, 313, 63, 63, 0, 188, 0},
		{"neg64", gates.BristolFashion, 190, 254, []int{64}, []int{64}, 63, 62, 64, 1, 63, 0},
		{"mult64", gates.BristolFashion, 13675, 13803, []int{64, 64}, []int{64}, 9642, 4033, 0, 0, 309, 0},
		{"mult2_64", gates.BristolFashion, 28032, 28160, []int{64, 64}, []int{64, 64}, 19904, 8128, 0, 0, 500, 0},
		{"zero_equal", gates.BristolFashion, 127, 191, []int{64}, []int{1}, 0, 63, 64, 0, 6, 0},
		{"FP-lt", gates.BristolFashion, 1536, 1664, []int{64, 64}, []int{64}, 257, 381, 898, 0, 196, 1},
		{"aes_128", gates.BristolFashion, 36663, 36919, []int{128, 128}, []int{128}, 28176, 6400, 2087, 0, 291, 0},
		{"sha256", gates.BristolFashion, 135073, 135841, []int{512, 256}, []int{256}, 110644, 22573, 1856, 0, 5331, 0},
		{"adder_32bit", gates.BristolOld, 375, 439, []int{32, 32}, []int{33}, 61, 127, 187, 0, 63, 0},
		{"AES-non-expanded", gates.BristolOld, 33616, 33872, []int{128, 128}, []int{128}, 25124, 6800, 1692, 0, 221, 0},
		{"int_gt64_size", gates.BristolOld, 385, 513, []int{64, 64}, []int{64}, 192, 64, 129, 0, 191, 1},
	} {
		c, err := circuits.Load(tc.name)
		require.NoError(t, err)
		got := fmt.Sprint(c.Format(), c.NumGates(), c.NumWires(), c.Inputs(), c.Outputs(),
			c.Count(gates.OpXOR), c.Count(gates.OpAND), c.Count(gates.OpNOT), c.Count(gates.OpCopy), c.Depth(),
			c.Bootstraps())
		want := fmt.Sprint(tc.format, tc.gates, tc.wires, tc.in, tc.out, tc.xor, tc.and, tc.inv, tc.eqw, tc.depth,
			tc.xor+tc.and-tc.same)
		if got != want {
			t.Errorf("%s: got %s, want %s", tc.name, got, want)
		}
		levels := c.Levels()
		if len(levels) != c.Depth()+1 || len(levels[0].Bootstrapped) != 0 {
			t.Errorf("%s: %d levels for depth %d, level 0 has %d bootstraps", tc.name, len(levels), c.Depth(), len(levels[0].Bootstrapped))
		}
		for l, lv := range levels[1:] {
			if len(lv.Bootstrapped) == 0 {
				t.Errorf("%s: level %d has no bootstrapped gate", tc.name, l+1)
			}
		}
	}
}

// run evaluates a shipped circuit on hex inputs in its documented order and
// returns hex outputs.
func run(t *testing.T, name string, in ...string) []string {
	t.Helper()
	info, ok := circuits.Lookup(name)
	if !ok {
		t.Fatalf("no circuit %s", name)
	}
	c, err := circuits.Load(name)
	require.NoError(t, err)
	widths := c.Inputs()
	vals := make([][]bool, len(in))
	for i, s := range in {
		if vals[i], err = gates.HexBits(s, widths[i], info.Order); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := c.Eval(vals...)
	require.NoError(t, err)
	res := make([]string, len(outs))
	for i, o := range outs {
		res[i] = gates.BitsHex(o, info.Order)
	}
	return res
}

// TestKnownAnswers reproduces every vector of SOURCES.md §5.
func TestKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		out  []string
	}{
		{"adder64", []string{"0123456789abcdef", "fedcba9876543210"}, []string{"ffffffffffffffff"}},
		{"adder64", []string{"ffffffffffffffff", "0000000000000001"}, []string{"0000000000000000"}},
		{"adder64", []string{"8000000000000000", "8000000000000000"}, []string{"0000000000000000"}},
		{"adder64", []string{"749882321e35049e", "79c8c2926b94b5b5"}, []string{"ee6144c489c9ba53"}},
		{"adder64", []string{"4242aadbc8f429a4", "eb7a79959588532d"}, []string{"2dbd24715e7c7cd1"}},
		{"sub64", []string{"0123456789abcdef", "fedcba9876543210"}, []string{"02468acf13579bdf"}},
		{"sub64", []string{"ffffffffffffffff", "0000000000000001"}, []string{"fffffffffffffffe"}},
		{"sub64", []string{"749882321e35049e", "79c8c2926b94b5b5"}, []string{"facfbf9fb2a04ee9"}},
		{"sub64", []string{"4242aadbc8f429a4", "eb7a79959588532d"}, []string{"56c83146336bd677"}},
		{"mult64", []string{"0123456789abcdef", "fedcba9876543210"}, []string{"2236d88fe5618cf0"}},
		{"mult64", []string{"749882321e35049e", "79c8c2926b94b5b5"}, []string{"2ca77a7b8d17f9b6"}},
		{"mult64", []string{"4242aadbc8f429a4", "eb7a79959588532d"}, []string{"b5c8e9300f8b7dd4"}},
		{"mult64", []string{"00000000ffffffff", "00000000ffffffff"}, []string{"fffffffe00000001"}},
		{"mult2_64", []string{"0123456789abcdef", "fedcba9876543210"}, []string{"0121fa00ad77d742", "2236d88fe5618cf0"}},
		{"mult2_64", []string{"ffffffffffffffff", "ffffffffffffffff"}, []string{"fffffffffffffffe", "0000000000000001"}},
		{"mult2_64", []string{"8000000000000000", "8000000000000000"}, []string{"4000000000000000", "0000000000000000"}},
		{"mult2_64", []string{"749882321e35049e", "79c8c2926b94b5b5"}, []string{"3777854daa125d6c", "2ca77a7b8d17f9b6"}},
		{"neg64", []string{"0000000000000000"}, []string{"0000000000000000"}},
		{"neg64", []string{"0000000000000001"}, []string{"ffffffffffffffff"}},
		{"neg64", []string{"8000000000000000"}, []string{"8000000000000000"}},
		{"neg64", []string{"0123456789abcdef"}, []string{"fedcba9876543211"}},
		{"zero_equal", []string{"0000000000000000"}, []string{"1"}},
		{"zero_equal", []string{"0000000000000001"}, []string{"0"}},
		{"zero_equal", []string{"8000000000000000"}, []string{"0"}},
		{"zero_equal", []string{"515c61236c88c537"}, []string{"0"}},
		{"FP-lt", []string{"3ff0000000000000", "4000000000000000"}, []string{"0000000000000001"}},
		{"FP-lt", []string{"4000000000000000", "3ff0000000000000"}, []string{"0000000000000000"}},
		{"FP-lt", []string{"bff0000000000000", "0000000000000000"}, []string{"0000000000000001"}},
		{"FP-lt", []string{"0000000000000000", "8000000000000000"}, []string{"0000000000000000"}},
		{"FP-lt", []string{"c00c000000000000", "c002000000000000"}, []string{"0000000000000001"}},
		{"FP-lt", []string{"3ff0000000000000", "3ff0000000000000"}, []string{"0000000000000000"}},
		{"int_gt64_size", []string{"0000000000000005", "0000000000000003"}, []string{"0000000000000001"}},
		{"int_gt64_size", []string{"0000000000000003", "0000000000000005"}, []string{"0000000000000000"}},
		{"int_gt64_size", []string{"ffffffffffffffff", "0000000000000000"}, []string{"0000000000000000"}},
		{"int_gt64_size", []string{"0000000000000000", "ffffffffffffffff"}, []string{"0000000000000001"}},
		{"int_gt64_size", []string{"8000000000000000", "7fffffffffffffff"}, []string{"0000000000000000"}},
		{"int_gt64_size", []string{"7fffffffffffffff", "8000000000000000"}, []string{"0000000000000001"}},
		{"int_gt64_size", []string{"0000000000000007", "0000000000000007"}, []string{"0000000000000000"}},
		{"int_gt64_size", []string{"f4b1b64633be40f5", "88718c966f3d88f7"}, []string{"0000000000000001"}},
		{"adder_32bit", []string{"01234567", "89abcdef"}, []string{"08acf1356"}},
		{"adder_32bit", []string{"ffffffff", "00000001"}, []string{"100000000"}},
		{"adder_32bit", []string{"ffffffff", "ffffffff"}, []string{"1fffffffe"}},
		{"adder_32bit", []string{"60c40eb7", "da1b1950"}, []string{"13adf2807"}},
		// aes_128: key first, then plaintext.
		{"aes_128", []string{"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"}, []string{"69c4e0d86a7b0430d8cdb78070b4c55a"}},
		{"aes_128", []string{"00000000000000000000000000000000", "ffffffffffffffffffffffffffffffff"}, []string{"3f5b8cc9ea855a0afa7347d23e8d664e"}},
		{"aes_128", []string{"00000000000000000000000000000000", "00000000000000000000000000000000"}, []string{"66e94bd4ef8a2c3b884cfa59ca342b2e"}},
		{"aes_128", []string{"2b7e151628aed2a6abf7158809cf4f3c", "6bc1bee22e409f96e93d7e117393172a"}, []string{"3ad77bb40d7a3660a89ecaf32466ef97"}},
		// AES-non-expanded: plaintext first, then key, MSB first.
		{"AES-non-expanded", []string{"00112233445566778899aabbccddeeff", "000102030405060708090a0b0c0d0e0f"}, []string{"69c4e0d86a7b0430d8cdb78070b4c55a"}},
		{"AES-non-expanded", []string{"ffffffffffffffffffffffffffffffff", "00000000000000000000000000000000"}, []string{"3f5b8cc9ea855a0afa7347d23e8d664e"}},
		// sha256: block, then chaining value.
		{"sha256", []string{"6162638000000000000000000000000000000000000000000000000000000000" +
			"0000000000000000000000000000000000000000000000000000000000000018", sha256IV},
			[]string{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
		{"sha256", []string{"80" + strings.Repeat("00", 63), sha256IV},
			[]string{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}},
		{"sha256", []string{"6162636462636465636465666465666765666768666768696768696a68696a6b" +
			"696a6b6c6a6b6c6d6b6c6d6e6c6d6e6f6d6e6f706e6f70718000000000000000", sha256IV},
			[]string{"85e655d6417a17953363376a624cde5c76e09589cac5f811cc4b32c1f20e533a"}},
		{"sha256", []string{strings.Repeat("00", 62) + "01c0", "85e655d6417a17953363376a624cde5c76e09589cac5f811cc4b32c1f20e533a"},
			[]string{"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}},
		{"sha256", []string{strings.Repeat("00", 64), strings.Repeat("00", 32)},
			[]string{"7ca51614425c3ba8ce54dd2fc2020ae7b6e574d198136d0fae7e26ccbf0be7a6"}},
	} {
		got := run(t, tc.name, tc.in...)
		if fmt.Sprint(got) != fmt.Sprint(tc.out) {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.in, got, tc.out)
		}
	}
}

const sha256IV = "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19"

// TestExamples checks the example vector each Info carries.
func TestExamples(t *testing.T) {
	for _, info := range circuits.List() {
		if got := run(t, info.Name, info.Example.In...); fmt.Sprint(got) != fmt.Sprint(info.Example.Out) {
			t.Errorf("%s%v = %v, want %v", info.Name, info.Example.In, got, info.Example.Out)
		}
		c, _ := circuits.Load(info.Name)
		if len(info.Inputs) != len(c.Inputs()) || len(info.Outputs) != len(c.Outputs()) {
			t.Errorf("%s: Info names %d inputs and %d outputs, circuit has %v and %v", info.Name, len(info.Inputs), len(info.Outputs), c.Inputs(), c.Outputs())
		}
	}
	if _, ok := circuits.Lookup("ADDER64.TXT"); !ok {
		t.Error("Lookup is not case-insensitive or rejects the file name")
	}
	if _, err := circuits.Load("nope"); err == nil {
		t.Error("Load of an unknown name succeeded")
	}
}

// TestRandom compares the integer circuits with Go arithmetic, the AES
// circuits with crypto/aes and the SHA-256 circuit with crypto/sha256 on
// random inputs.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 200
	if testing.Short() {
		n = 20
	}
	u := func(c string, in ...uint64) []uint64 {
		t.Helper()
		cc, _ := circuits.Load(c)
		vals := make([][]bool, len(in))
		for i, v := range in {
			vals[i] = gates.Uint64Bits(v, cc.Inputs()[i])
		}
		outs, err := cc.Eval(vals...)
		require.NoError(t, err)
		res := make([]uint64, len(outs))
		for i, o := range outs {
			res[i] = gates.BitsUint64(o)
		}
		return res
	}
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	edges := []uint64{0, 1, 2, math.MaxUint64, 1 << 63, 1<<63 - 1, 0xffffffff}
	for i := range n + len(edges)*len(edges) {
		a, b := rng.Uint64(), rng.Uint64()
		if i >= n {
			a, b = edges[(i-n)/len(edges)], edges[(i-n)%len(edges)]
		}
		hi, lo := bits.Mul64(a, b)
		fa, fb := math.Float64frombits(a), math.Float64frombits(b)
		for _, chk := range []struct {
			name string
			got  []uint64
			want []uint64
		}{
			{"adder64", u("adder64", a, b), []uint64{a + b}},
			{"sub64", u("sub64", a, b), []uint64{a - b}},
			{"neg64", u("neg64", a), []uint64{-a}},
			{"mult64", u("mult64", a, b), []uint64{a * b}},
			{"mult2_64", u("mult2_64", a, b), []uint64{hi, lo}},
			{"zero_equal", u("zero_equal", a), []uint64{b2u(a == 0)}},
			{"zero_equal(0)", u("zero_equal", 0), []uint64{1}},
			{"FP-lt", u("FP-lt", a, b), []uint64{b2u(fa < fb)}},
			{"int_gt64_size", u("int_gt64_size", a, b), []uint64{b2u(int64(a) > int64(b))}},
			{"adder_32bit", u("adder_32bit", a&0xffffffff, b>>32), []uint64{a&0xffffffff + b>>32}},
		} {
			if fmt.Sprint(chk.got) != fmt.Sprint(chk.want) {
				t.Errorf("%s(%#x, %#x) = %#x, want %#x", chk.name, a, b, chk.got, chk.want)
			}
		}
	}

	m := n / 10
	for range m {
		key, pt := make([]byte, 16), make([]byte, 16)
		fill(rng, key)
		fill(rng, pt)
		ct := make([]byte, 16)
		blk, _ := aes.NewCipher(key)
		blk.Encrypt(ct, pt)
		want := hex.EncodeToString(ct)
		k, p := hex.EncodeToString(key), hex.EncodeToString(pt)
		if got := run(t, "aes_128", k, p); got[0] != want {
			t.Errorf("aes_128(%s, %s) = %s, want %s", k, p, got[0], want)
		}
		if got := run(t, "AES-non-expanded", p, k); got[0] != want {
			t.Errorf("AES-non-expanded(%s, %s) = %s, want %s", p, k, got[0], want)
		}
	}
	for range m {
		// A one-block message: the circuit applied to the padded block and
		// the IV is the digest.
		msg := make([]byte, rng.IntN(56))
		fill(rng, msg)
		block := make([]byte, 64)
		copy(block, msg)
		block[len(msg)] = 0x80
		binary.BigEndian.PutUint64(block[56:], uint64(8*len(msg)))
		sum := sha256.Sum256(msg)
		if got := run(t, "sha256", hex.EncodeToString(block), sha256IV); got[0] != hex.EncodeToString(sum[:]) {
			t.Errorf("sha256 of %x = %s, want %x", msg, got[0], sum)
		}
	}
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}
