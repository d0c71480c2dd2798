package kernels

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The driver's module loaders take a pointer and no length: they trust the
// sizes and offsets the image declares. A truncated or garbled image makes
// them read past its end, which on an H200 (driver 580) killed the process
// with SIGSEGV inside libcuda, or "succeeded" on bytes that were never part
// of the image. So LoadModule checks, before the call, that every size and
// offset the driver goes by lies within the image; checkImage is that
// check.

// imageKind is how the driver reads a kernel image, told by its first bytes.
type imageKind int

const (
	imagePTX    imageKind = iota // text, read up to its first NUL
	imageCubin                   // a 64-bit ELF file
	imageFatbin                  // a fatbin container (nvcc -fatbin)
)

// Fatbin container header (fatbinary.h's fatBinaryHeader, little endian):
// u32 magic at 0, u16 version at 4, u16 headerSize at 6, u64 fatSize at 8,
// the bytes of the entries that follow the header.
const (
	fatbinMagic      = 0xBA55ED50
	fatbinHeaderSize = 16
)

// Magics of the host-side structs that point to a fatbin: the
// __fatBinC_Wrapper_t of fatbinary_section.h and the pre-CUDA 4
// __cudaFatCudaBinary. cuModuleLoadData follows their pointers, which a
// byte image cannot hold.
const (
	fatbinWrapperMagic = 0x466243B1
	oldFatbinMagic     = 0x1EE55A01
)

// ELF64 layout (the System V gABI, "ELF Header", "Sections", "Program
// Header"): the sizes of the structures and the offsets of the fields read.
const (
	elfHeaderSize  = 64
	elfSectionSize = 64 // Elf64_Shdr
	elfProgramSize = 56 // Elf64_Phdr
	elfClass64     = 2  // e_ident[EI_CLASS]
	elfDataLE      = 1  // e_ident[EI_DATA]
	elfNoBits      = 8  // SHT_NOBITS: a section with no bytes in the file
	elfXIndex      = 0xffff
)

// checkImage returns how the driver will read image, or an error saying
// what in it lies beyond its end (or cannot be an image at all):
//
//   - a fatbin (magic 0xBA55ED50): its 16-byte header must be whole, say it
//     is 16 bytes, and declare no more bytes after it than the image has;
//   - a cubin (an ELF file): 64-bit little-endian, and its section and
//     program header tables, the bytes of every section (but SHT_NOBITS)
//     and of every segment, within the image;
//   - a fatbin wrapper (see fatbinWrapperMagic): refused;
//   - anything else is PTX text, which the driver reads up to its first
//     NUL. Nothing is checked: LoadModule's copy ends in a NUL, so the
//     read stops within the buffer even when the image has none (a .ptx
//     file read as it is).
//
// It does not look inside a fatbin's entries: the driver reads them within
// the size the header declares.
func checkImage(image []byte) (imageKind, error) {
	le := binary.LittleEndian
	if len(image) >= 4 {
		switch m := le.Uint32(image); m {
		case fatbinMagic:
			return imageFatbin, checkFatbin(image)
		case fatbinWrapperMagic, oldFatbinMagic:
			return imagePTX, fmt.Errorf("a fatbin wrapper struct (magic %#x), which points to the image instead of holding it", m)
		}
		if string(image[:4]) == "\x7fELF" {
			return imageCubin, checkCubin(image)
		}
	}
	return imagePTX, nil
}

func checkFatbin(image []byte) error {
	le := binary.LittleEndian
	if len(image) < fatbinHeaderSize {
		return fmt.Errorf("fatbin of %d bytes, shorter than its %d-byte header", len(image), fatbinHeaderSize)
	}
	if h := le.Uint16(image[6:]); h != fatbinHeaderSize {
		return fmt.Errorf("fatbin header says it is %d bytes, want %d", h, fatbinHeaderSize)
	}
	if fat := le.Uint64(image[8:]); fat > uint64(len(image)-fatbinHeaderSize) {
		return fmt.Errorf("fatbin header declares %d+%d bytes, image has %d", fatbinHeaderSize, fat, len(image))
	}
	return nil
}

func checkCubin(image []byte) error {
	le := binary.LittleEndian
	n := uint64(len(image))
	if n < elfHeaderSize {
		return fmt.Errorf("ELF image of %d bytes, shorter than its %d-byte header", n, elfHeaderSize)
	}
	if image[4] != elfClass64 || image[5] != elfDataLE {
		return fmt.Errorf("ELF image of class %d, data encoding %d: cubins are 64-bit little-endian (2, 1)", image[4], image[5])
	}
	phoff, shoff := le.Uint64(image[0x20:]), le.Uint64(image[0x28:])
	phentsize, phnum := uint64(le.Uint16(image[0x36:])), uint64(le.Uint16(image[0x38:]))
	shentsize, shnum := uint64(le.Uint16(image[0x3a:])), uint64(le.Uint16(image[0x3c:]))
	shstrndx := uint64(le.Uint16(image[0x3e:]))
	if shoff != 0 && (shnum == 0 || shstrndx == elfXIndex || phnum == elfXIndex) {
		// Extended numbering (gABI): a count or index too large for its
		// field is in section 0's sh_size, sh_link or sh_info.
		if err := elfTable("section header", shoff, 1, shentsize, elfSectionSize, n); err != nil {
			return err
		}
		s0 := image[shoff:]
		if shnum == 0 {
			shnum = le.Uint64(s0[0x20:])
		}
		if shstrndx == elfXIndex {
			shstrndx = uint64(le.Uint32(s0[0x28:]))
		}
		if phnum == elfXIndex {
			phnum = uint64(le.Uint32(s0[0x2c:]))
		}
	}
	if err := elfTable("section header", shoff, shnum, shentsize, elfSectionSize, n); err != nil {
		return err
	}
	if err := elfTable("program header", phoff, phnum, phentsize, elfProgramSize, n); err != nil {
		return err
	}
	if shnum > 0 && shstrndx >= shnum {
		return fmt.Errorf("ELF section name table is section %d of %d", shstrndx, shnum)
	}
	for i := uint64(0); i < shnum; i++ {
		s := image[shoff+i*shentsize:]
		typ, off, size := le.Uint32(s[4:]), le.Uint64(s[0x18:]), le.Uint64(s[0x20:])
		if typ != elfNoBits && !within(off, size, n) {
			return fmt.Errorf("ELF section %d declares %d bytes at %d, image has %d", i, size, off, n)
		}
	}
	for i := uint64(0); i < phnum; i++ {
		p := image[phoff+i*phentsize:]
		off, size := le.Uint64(p[8:]), le.Uint64(p[0x20:])
		if !within(off, size, n) {
			return fmt.Errorf("ELF segment %d declares %d bytes at %d, image has %d", i, size, off, n)
		}
	}
	return nil
}

// elfTable checks that a table of num entries of entsize bytes (at least
// need: the fields read) at off lies within n bytes.
func elfTable(what string, off, num, entsize, need, n uint64) error {
	if num == 0 {
		return nil
	}
	if entsize < need {
		return fmt.Errorf("ELF %s entries of %d bytes, want at least %d", what, entsize, need)
	}
	hi, size := bits.Mul64(num, entsize)
	if hi != 0 || !within(off, size, n) {
		return fmt.Errorf("ELF %s table declares %d×%d bytes at %d, image has %d", what, num, entsize, off, n)
	}
	return nil
}

// within reports whether [off, off+size) lies within n bytes, without
// computing off+size (which may overflow).
func within(off, size, n uint64) bool { return off <= n && size <= n-off }
