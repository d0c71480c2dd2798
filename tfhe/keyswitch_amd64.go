//go:build amd64 && !purego

package tfhe

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/goldfhe/goldfhe/torus"
)

// haveAVX2 reports whether the CPU and the OS support AVX2
// (golang.org/x/sys/cpu).
var haveAVX2 = cpu.X86.HasAVX2

// useKSAsm selects keyswitch_amd64.s for evaluators built from now on
// (tests turn it off to compare with keySwitch).
var useKSAsm = haveAVX2

// keySwitchAccel is keySwitch with the rows added in AVX2 assembly, from a
// list built first (ksRowList) so that the kernel can prefetch the rows it
// will need next: the table (41 MB for TFHELib128) is read from memory at
// random rows. It returns false, doing nothing, when rows is nil.
func keySwitchAccel(out, in []torus.Torus32, table []torus.Torus32, p Params, rows []int64) bool {
	if rows == nil {
		return false
	}
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	w := n + 1
	out = out[:w]
	clear(out)
	out[n] = in[kn]
	if c := ksRowList(rows, in, p); c > 0 {
		// Every offset in the list is that of a whole row of the table
		// (ksRowList, KeySwitchingKey layout), checked by the key's length.
		_ = table[ksTableLen(p)-1]
		ksAccumulate((*uint32)(unsafe.Pointer(&out[0])), w, (*uint32)(unsafe.Pointer(&table[0])), &rows[0], c)
	}
	return true
}

// ksAccumulate adds (offset | 1) or subtracts (offset) the w-word table rows
// at the byte offsets rows[0 … count−1] to or from acc.
//
//go:noescape
func ksAccumulate(acc *uint32, w int, table *uint32, rows *int64, count int)
