package kernels

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// committedFatbin returns the embedded fatbin, skipping t (with the reason)
// while none has been built.
func committedFatbin(t testing.TB) []byte {
	t.Helper()
	if len(embeddedFatbin) == 0 {
		t.Skip("kernels: no fatbin built yet (goldfhe.fatbin is empty)")
	}
	return embeddedFatbin
}

// fatbinCubins returns the uncompressed ELF entries of a fatbin, walking
// its entries by the layout nvcc writes (not documented by NVIDIA, and so
// used only here): u16 kind, u16 version, u32 header size, u64 payload
// size, the header, then the payload.
func fatbinCubins(t testing.TB, fatbin []byte) [][]byte {
	t.Helper()
	le := binary.LittleEndian
	var cubins [][]byte
	for off := uint64(fatbinHeaderSize); off < uint64(len(fatbin)); {
		if !within(off, 16, uint64(len(fatbin))) {
			t.Fatalf("fatbin entry at %d: header cut off", off)
		}
		hs, ps := uint64(le.Uint32(fatbin[off+4:])), le.Uint64(fatbin[off+8:])
		if !within(off+hs, ps, uint64(len(fatbin))) {
			t.Fatalf("fatbin entry at %d: %d+%d bytes, fatbin has %d", off, hs, ps, len(fatbin))
		}
		if p := fatbin[off+hs : off+hs+ps]; bytes.HasPrefix(p, []byte("\x7fELF")) {
			cubins = append(cubins, p)
		}
		off += hs + ps
	}
	return cubins
}

// tinyCubin is the smallest ELF file that has what a cubin has: an
// ELF64 little-endian header, a section name table (section 1, 11 bytes at
// 64), a section header table of 2 entries at 80 and a program header
// table of 1 (a PT_LOAD of the name table) at 208; 264 bytes.
func tinyCubin() []byte {
	le := binary.LittleEndian
	b := make([]byte, 264)
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[0x10:], 2)   // ET_EXEC
	le.PutUint16(b[0x12:], 190) // EM_CUDA
	le.PutUint32(b[0x14:], 1)   // EV_CURRENT
	le.PutUint64(b[0x20:], 208) // e_phoff
	le.PutUint64(b[0x28:], 80)  // e_shoff
	le.PutUint16(b[0x34:], elfHeaderSize)
	le.PutUint16(b[0x36:], elfProgramSize)
	le.PutUint16(b[0x38:], 1)
	le.PutUint16(b[0x3a:], elfSectionSize)
	le.PutUint16(b[0x3c:], 2)
	le.PutUint16(b[0x3e:], 1) // e_shstrndx
	copy(b[64:], "\x00.shstrtab\x00")
	s1 := b[80+elfSectionSize:]
	le.PutUint32(s1[0:], 1) // name ".shstrtab"
	le.PutUint32(s1[4:], 3) // SHT_STRTAB
	le.PutUint64(s1[0x18:], 64)
	le.PutUint64(s1[0x20:], 11)
	le.PutUint64(s1[0x30:], 1) // sh_addralign
	p := b[208:]
	le.PutUint32(p[0:], 1) // PT_LOAD
	le.PutUint64(p[8:], 64)
	le.PutUint64(p[0x20:], 11)
	le.PutUint64(p[0x28:], 11)
	return b
}

// TestTinyCubin checks that tinyCubin is the ELF file it says, by
// debug/elf's reading.
func TestTinyCubin(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(tinyCubin()))
	require.NoError(t, err)
	if len(f.Sections) != 2 || f.Sections[1].Name != ".shstrtab" || len(f.Progs) != 1 || f.Progs[0].Filesz != 11 {
		t.Errorf("tinyCubin: sections %v, programs %v", f.Sections, f.Progs)
	}
}

// TestEmbeddedFatbinWhole checks that the committed fatbin passes
// LoadModule's check and is exactly as long as its header says (a
// truncated commit would fail here, not in the driver), and that so does
// every cubin in it.
func TestEmbeddedFatbinWhole(t *testing.T) {
	fatbin := committedFatbin(t)
	kind, err := checkImage(fatbin)
	if err != nil || kind != imageFatbin {
		t.Fatalf("checkImage(goldfhe.fatbin) = %v, %v; want a fatbin", kind, err)
	}
	if fat := binary.LittleEndian.Uint64(fatbin[8:]); fat != uint64(len(fatbin)-fatbinHeaderSize) {
		t.Errorf("goldfhe.fatbin header declares 16+%d bytes, the file has %d", fat, len(fatbin))
	}
	cubins := fatbinCubins(t, fatbin)
	if len(cubins) == 0 {
		t.Log("goldfhe.fatbin has no uncompressed cubin; the cubin checks run on tinyCubin only")
	}
	for i, c := range cubins {
		if kind, err := checkImage(c); err != nil || kind != imageCubin {
			t.Errorf("cubin %d of goldfhe.fatbin: checkImage = %v, %v; want a cubin", i, kind, err)
		}
	}
}

// sampleCubin is the first cubin of the committed fatbin, or tinyCubin.
func sampleCubin(t testing.TB) []byte {
	t.Helper()
	if len(embeddedFatbin) > 0 {
		if cs := fatbinCubins(t, embeddedFatbin); len(cs) > 0 {
			return cs[0]
		}
	}
	return tinyCubin()
}

type badImage struct {
	name  string
	image []byte
	want  string // in the error
}

// badImages are truncated and garbled images, made from the committed
// fatbin and cubins, that the driver would read past the end of.
func badImages(t testing.TB) []badImage {
	le := binary.LittleEndian
	fatbin := committedFatbin(t)
	fat := le.Uint64(fatbin[8:])
	edit := func(b []byte, f func(b []byte)) []byte {
		b = bytes.Clone(b)
		f(b)
		return b
	}
	declares := func(n int) string { return fmt.Sprintf("fatbin header declares 16+%d bytes, image has %d", fat, n) }
	n := len(fatbin)
	imgs := []badImage{
		{"fatbin[:8]", fatbin[:8], "fatbin of 8 bytes, shorter than its 16-byte header"},
		{"fatbin[:15]", fatbin[:15], "fatbin of 15 bytes"},
		{"fatbin[:16]", fatbin[:16], declares(16)},
		{"fatbin[:4096]", fatbin[:4096], declares(4096)},
		{"fatbin[:half]", fatbin[:n/2], declares(n / 2)},
		{"fatbin[:90%]", fatbin[:n/10*9], declares(n / 10 * 9)},
		{"fatbin[:len-4096]", fatbin[:n-4096], declares(n - 4096)},
		{"fatbin[:len-1]", fatbin[:n-1], declares(n - 1)},
		{"headerSize=0", edit(fatbin[:4096], func(b []byte) { le.PutUint16(b[6:], 0) }), "fatbin header says it is 0 bytes, want 16"},
		{"headerSize=24", edit(fatbin, func(b []byte) { le.PutUint16(b[6:], 24) }), "fatbin header says it is 24 bytes, want 16"},
		{"fatSize=2^64-1", edit(fatbin, func(b []byte) { le.PutUint64(b[8:], 1<<64-1) }),
			fmt.Sprintf("fatbin header declares 16+%d bytes, image has %d", uint64(1<<64-1), n)},
		{"fatSize=len-15", edit(fatbin, func(b []byte) { le.PutUint64(b[8:], uint64(n-15)) }),
			fmt.Sprintf("fatbin header declares 16+%d bytes, image has %d", n-15, n)},
		{"wrapper", le.AppendUint64(le.AppendUint32(le.AppendUint32(nil, fatbinWrapperMagic), 1), 0x7f00_0000_1000), "fatbin wrapper struct (magic 0x466243b1)"},
		{"old wrapper", le.AppendUint32(le.AppendUint32(nil, oldFatbinMagic), 4), "fatbin wrapper struct (magic 0x1ee55a01)"},
	}

	cubin := sampleCubin(t)
	m := len(cubin)
	shoff := le.Uint64(cubin[0x28:])
	shnum := le.Uint16(cubin[0x3c:])
	s1 := shoff + elfSectionSize // section 1's header
	phoff := le.Uint64(cubin[0x20:])
	imgs = append(imgs, []badImage{
		{"cubin[:8]", cubin[:8], "ELF image of 8 bytes, shorter than its 64-byte header"},
		{"cubin[:63]", cubin[:63], "ELF image of 63 bytes"},
		{"cubin[:64]", cubin[:64], "image has 64"},
		{"cubin[:half]", cubin[:m/2], fmt.Sprintf("image has %d", m/2)},
		{"cubin cut in its section headers", cubin[:shoff+elfSectionSize+1], "ELF section header table declares"},
		{"cubin[:len-1]", cubin[:m-1], fmt.Sprintf("image has %d", m-1)},
		{"ELF32", edit(cubin, func(b []byte) { b[4] = 1 }), "ELF image of class 1, data encoding 1"},
		{"big-endian ELF", edit(cubin, func(b []byte) { b[5] = 2 }), "ELF image of class 2, data encoding 2"},
		{"e_shoff=2^64-1", edit(cubin, func(b []byte) { le.PutUint64(b[0x28:], 1<<64-1) }), "ELF section header table declares"},
		{"e_shoff=len", edit(cubin, func(b []byte) { le.PutUint64(b[0x28:], uint64(m)) }), "ELF section header table declares"},
		{"e_shnum=65535", edit(cubin, func(b []byte) { le.PutUint16(b[0x3c:], 0xffff) }), "ELF section header table declares 65535×64"},
		{"e_shentsize=0", edit(cubin, func(b []byte) { le.PutUint16(b[0x3a:], 0) }), "ELF section header entries of 0 bytes, want at least 64"},
		{"e_phoff=2^64-8", edit(cubin, func(b []byte) { le.PutUint64(b[0x20:], 1<<64-8) }), "ELF program header table declares"},
		{"e_phentsize=8", edit(cubin, func(b []byte) { le.PutUint16(b[0x36:], 8) }), "ELF program header entries of 8 bytes, want at least 56"},
		{"e_shstrndx=e_shnum", edit(cubin, func(b []byte) { le.PutUint16(b[0x3e:], shnum) }), fmt.Sprintf("ELF section name table is section %d of %d", shnum, shnum)},
		{"section offset 2^64-8", edit(cubin, func(b []byte) { le.PutUint64(b[s1+0x18:], 1<<64-8) }), "ELF section 1 declares"},
		{"section size len", edit(cubin, func(b []byte) { le.PutUint64(b[s1+0x20:], uint64(m)) }), "ELF section 1 declares"},
		{"segment size 2^64-1", edit(cubin, func(b []byte) { le.PutUint64(b[phoff+0x20:], 1<<64-1) }), "ELF segment 0 declares"},
		{"extended section count 2^63", edit(cubin, func(b []byte) {
			le.PutUint16(b[0x3c:], 0)
			le.PutUint64(b[shoff+0x20:], 1<<63)
		}), "ELF section header table declares 9223372036854775808×64"},
	}...)
	return imgs
}

// TestCheckImageRefuses: every truncated or garbled image is refused, with
// an error that says what is wrong.
func TestCheckImageRefuses(t *testing.T) {
	for _, b := range badImages(t) {
		if _, err := checkImage(b.image); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: checkImage error %v, want one containing %q", b.name, err, b.want)
		}
	}
}

// loadCalls counts the fake driver's module loads.
func loadCalls(g *fakeGPU) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[symModuleLoadData] + g.calls[symModuleLoadFatBinary]
}

// TestLoadModuleRefusesBadImages (fake): LoadModule refuses every bad image
// with an error wrapping ErrBadImage before any call reaches the driver.
func TestLoadModuleRefusesBadImages(t *testing.T) {
	g, c, _ := newFake(t)
	before := loadCalls(g)
	for _, b := range badImages(t) {
		_, err := c.LoadModule(b.image)
		if !errors.Is(err, ErrBadImage) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: LoadModule error %v, want ErrBadImage and %q", b.name, err, b.want)
		}
	}
	if got := loadCalls(g) - before; got != 0 {
		t.Errorf("%d bad images reached the driver", got)
	}
}

// TestLoadLibraryRefusesTruncatedOverride (fake): a truncated fatbin named
// by GOLDFHE_FATBIN is refused, naming the file, before any driver call.
func TestLoadLibraryRefusesTruncatedOverride(t *testing.T) {
	fatbin := committedFatbin(t)
	g, c, _ := newFake(t)
	p := filepath.Join(t.TempDir(), "truncated.fatbin")
	require.NoError(t, os.WriteFile(p, fatbin[:4096], 0o644))
	t.Setenv(FatbinEnv, p)
	before := loadCalls(g)
	_, err := c.LoadLibrary()
	require.ErrorIs(t, err, ErrBadImage)
	want := fmt.Sprintf("image has 4096 (loading %s=%s)", FatbinEnv, p)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not end in %q", err, want)
	}
	if got := loadCalls(g) - before; got != 0 {
		t.Errorf("the truncated fatbin reached the driver (%d calls)", got)
	}
}

// TestLoadModuleAccepts (fake): whole images reach the driver, each
// through its entry point.
func TestLoadModuleAccepts(t *testing.T) {
	g, c, _ := newFake(t)
	for _, tc := range []struct {
		name  string
		image []byte
		kind  imageKind
		sym   sym
	}{
		{"fakeImage", fakeImage, imageFatbin, symModuleLoadFatBinary},
		{"goldfhe.fatbin", committedFatbin(t), imageFatbin, symModuleLoadFatBinary},
		{"cubin", sampleCubin(t), imageCubin, symModuleLoadData},
		{"tinyCubin", tinyCubin(), imageCubin, symModuleLoadData},
		{"PTX", []byte(".version 8.0\n.target sm_90\n.address_size 64\n\x00"), imagePTX, symModuleLoadData},
		{"PTX without NUL", []byte(".version 8.0\n"), imagePTX, symModuleLoadData},
	} {
		kind, err := checkImage(tc.image)
		if err != nil || kind != tc.kind {
			t.Errorf("%s: checkImage = %v, %v; want kind %v", tc.name, kind, err, tc.kind)
		}
		g.mu.Lock()
		before := g.calls[tc.sym]
		g.mu.Unlock()
		// The fake makes a module of anything that starts with the fatbin
		// magic and refuses the rest: what matters is the call.
		m, err := c.LoadModule(tc.image)
		if err == nil {
			require.NoError(t, m.Close())
		} else if tc.kind == imageFatbin || !errors.Is(err, ErrBadImage) || !strings.Contains(err.Error(), tc.sym.String()) {
			t.Errorf("%s: LoadModule: %v", tc.name, err)
		}
		g.mu.Lock()
		if g.calls[tc.sym] != before+1 {
			t.Errorf("%s: %d calls of %v, want 1", tc.name, g.calls[tc.sym]-before, tc.sym)
		}
		g.mu.Unlock()
	}
}

// FuzzCheckImage: checkImage never panics, tells the kind by the magic,
// and whatever it accepts lies within the image by a second reading
// (plain arithmetic for a fatbin, debug/elf for a cubin).
func FuzzCheckImage(f *testing.F) {
	f.Add(fakeImage)
	f.Add(tinyCubin())
	f.Add([]byte(".version 8.0\n\x00"))
	if len(embeddedFatbin) >= 512 {
		f.Add(bytes.Clone(embeddedFatbin[:512]))
	}
	f.Fuzz(func(t *testing.T, image []byte) {
		kind, err := checkImage(image)
		le := binary.LittleEndian
		magic := uint32(0)
		if len(image) >= 4 {
			magic = le.Uint32(image)
		}
		switch {
		case magic == fatbinMagic:
			if kind != imageFatbin {
				t.Fatalf("fatbin magic read as kind %v", kind)
			}
			if err != nil {
				return
			}
			if len(image) < fatbinHeaderSize {
				t.Fatalf("accepted a fatbin of %d bytes", len(image))
			}
			end, carry := bits.Add64(le.Uint64(image[8:]), fatbinHeaderSize, 0)
			if le.Uint16(image[6:]) != fatbinHeaderSize || carry != 0 || end > uint64(len(image)) {
				t.Fatalf("accepted a fatbin whose header (size %d) declares 16+%d bytes of %d",
					le.Uint16(image[6:]), le.Uint64(image[8:]), len(image))
			}
		case magic == fatbinWrapperMagic || magic == oldFatbinMagic:
			require.Error(t, err, "accepted a fatbin wrapper")
		case bytes.HasPrefix(image, []byte("\x7fELF")):
			if kind != imageCubin {
				t.Fatalf("ELF magic read as kind %v", kind)
			}
			if err == nil {
				checkELFWithin(t, image)
			}
		default:
			if kind != imagePTX || err != nil {
				t.Fatalf("text read as kind %v, %v", kind, err)
			}
		}
	})
}

// checkELFWithin fails t if debug/elf reads a section or segment of an
// accepted cubin beyond its end.
func checkELFWithin(t *testing.T, image []byte) {
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return // debug/elf is stricter in other ways (names, versions)
	}
	n := uint64(len(image))
	for i, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && !within(s.Offset, s.FileSize, n) {
			t.Fatalf("accepted a cubin whose section %d is %d bytes at %d of %d", i, s.FileSize, s.Offset, n)
		}
	}
	for i, p := range f.Progs {
		if !within(p.Off, p.Filesz, n) {
			t.Fatalf("accepted a cubin whose segment %d is %d bytes at %d of %d", i, p.Filesz, p.Off, n)
		}
	}
}
