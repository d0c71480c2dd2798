package kernels

import "unsafe"

// ksPackedName is the key-switching kernel that reads the table packed in
// its tensor-core fragments' order (bootstrap.cuh), optional: a fatbin
// built before it lacks it, and KeySwitchPacked then runs KeySwitch.
const ksPackedName = "goldfhe_bs_keyswitch_packed_b2"

// The packed kernel's tile (KSP_* in bootstrap.cuh): blocks of ksp warps
// over kspSamples samples × kspOctets octets of output words, the input
// coordinates in chunks of 2·kspSteps.
const (
	kspWarps   = 8
	kspSamples = 128
	kspOctets  = 4
	kspSteps   = 8
)

// KSPackable reports whether the key-switching table of shape s has a
// packed form (PackKSTable): basebit 2 with t ≤ 8, the form of
// TFHELib128's and CuFHE80's keys.
func (s BootstrapShape) KSPackable() bool { return s.KSBaseLog == 2 && s.KSLevels <= 8 }

// KSPackedLen returns the number of uint32 of the packed key-switching
// table: ⌈k·N/2⌉ coordinate pairs × ⌈(n+1)/8⌉ octets of output words ×
// 256 words.
func (s BootstrapShape) KSPackedLen() int {
	return (s.ExtractedDim() + 1) / 2 * ((s.LWEDim + 8) / 8) * 256
}

// PackKSTable returns the key-switching table of shape s (sh.KSTableLen()
// words, the layout of tfhe.KeySwitchingKey) in the order its tensor-core
// fragments are loaded by goldfhe_bs_keyswitch_packed_b2: for each pair of
// input coordinates u (coordinates 2u and 2u+1), each octet o of output
// words and each half h, 32 lanes (g, q) of four words {b0, b1} of bytes
// 2h and 2h+1, where b0 (b1) of byte b packs byte b of word 8o+g of the
// |digit| = 1 (= 2) rows of coordinate 2u + q/2 at levels 4(q%2)+1 …
// 4(q%2)+4, the first level in its low byte. Levels past t, coordinates
// past k·N and words past n are zero. Only basebit 2 with t ≤ 8 has this
// form (KSPackable).
func PackKSTable(sh BootstrapShape, table []uint32) ([]uint32, error) {
	const op = "PackKSTable"
	if err := sh.Check(); err != nil {
		return nil, argErr(op, "%v", err)
	}
	if !sh.KSPackable() {
		return nil, argErr(op, "basebit %d, t = %d: only basebit 2 with t ≤ 8 packs", sh.KSBaseLog, sh.KSLevels)
	}
	if len(table) != sh.KSTableLen() {
		return nil, argErr(op, "table of %d words, want KSTableLen %d", len(table), sh.KSTableLen())
	}
	out := make([]uint32, sh.KSPackedLen())
	ksPackWalk(sh, func(src, dst, b, e int) { out[dst] |= (table[src] >> (8 * b) & 0xFF) << (8 * e) })
	return out, nil
}

// ksPackWalk calls visit for every byte of the table of shape sh
// (KSPackable): byte b of table word src is byte e of packed word dst
// (PackKSTable's layout). Each table byte is visited once; packed bytes
// not visited are zero.
func ksPackWalk(sh BootstrapShape, visit func(src, dst, b, e int)) {
	n, kn, t := sh.LWEDim, sh.ExtractedDim(), sh.KSLevels
	w, octets := n+1, (n+8)/8
	for u := range (kn + 1) / 2 {
		for o := range octets {
			for lane := range 32 {
				g, q := lane/4, lane%4
				i, m := 2*u+q/2, 8*o+g
				for e := range 4 {
					j := 4*(q%2) + e + 1 // level
					if i >= kn || j > t || m > n {
						continue
					}
					for row := range 2 { // |digit| = 1, 2: b0, b1
						src := ((i*t+j-1)*2+row)*w + m
						for b := range 4 {
							// b0, b1 of bytes 2h and 2h+1 in half h = b/2.
							visit(src, (((u*octets+o)*2+b/2)*32+lane)*4+2*(b%2)+row, b, e)
						}
					}
				}
			}
		}
	}
}

// HasKeySwitchPacked reports whether the fatbin has the packed
// key-switching kernel (a fatbin built before it has not).
func (b *BootstrapKernels) HasKeySwitchPacked() bool { return b.keyswP.f != nil }

// KeySwitchPacked computes what KeySwitch computes, bit for bit, from
// ksPackedMin samples on with the packed table (PackKSTable of table;
// sh.KSPackedLen() words on a 16-byte boundary) on the tensor cores, and
// below that, without a packed table (packed nil), for a shape without a
// packed form or with a fatbin without the kernel, with KeySwitch on
// table.
func (b *BootstrapKernels) KeySwitchPacked(s *Stream, sh BootstrapShape, out, in, table, packed *DeviceBuffer[uint32], count int) error {
	const op = "BootstrapKernels.KeySwitchPacked"
	if packed == nil || !sh.KSPackable() || b.keyswP.f == nil || count < ksPackedMin {
		return b.KeySwitch(s, sh, out, in, table, count)
	}
	l := b.l
	n, kn := sh.LWEDim, sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("out", out, count*(n+1), true),
		opnd("in", in, count*(kn+1), false),
		opnd("packed", packed, sh.KSPackedLen(), false))
	if err != nil {
		return err
	}
	if ptrs[2]%16 != 0 {
		return argErr(op, "packed table at %#x: the kernel reads it 16 bytes at a time, from 16-byte boundaries (a view must start at a multiple of 4 words)", ptrs[2])
	}
	octets, steps := (n+8)/8, (kn+1)/2
	grid := dim3{uint32((octets + kspOctets - 1) / kspOctets), uint32(min((count+kspSamples-1)/kspSamples, maxGridY)), 1}
	grid.z = uint32(ksPackedChunksFor(int(grid.x)*int(grid.y), steps, l.c.info.SMs))
	k := &b.keyswP
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [9]uint32{uint32(n), uint32(kn), uint32(sh.KSLevels), sh.KSOffset, uint32(count)}
	if grid.z > 1 {
		// The chunks add into out with atomicAdd: it starts at zero.
		if err := memsetD32Async(l.c, ptrs[0], 0, count*(n+1), h); err != nil {
			return err
		}
	}
	return launchPinned(k.f, grid, dim3{kspWarps * 32, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// ksPackedMin is the smallest batch KeySwitchPacked runs on the packed
// kernel: where KeySwitch's tensor-core kernel starts (ksMMAMin), which
// it beats from there on (H100, kernels BenchmarkKeySwitch, ms per call:
// 64 samples 0.043 against 0.105, 4,096 0.85 against 3.06; BENCHMARKS.md
// session 21). Below, its blocks of 128 samples would be mostly empty and
// KeySwitch takes the kernels without tensor cores.
const ksPackedMin = ksMMAMin

// ksPackedChunks is how many blocks of the packed kernel share the input
// coordinates (the grid's z): none while the grid has two blocks per SM
// (as many as fit), else enough for that, each chunk keeping at least two
// of the kernel's chunks of k-steps, at most 32.
func ksPackedChunks(blocks, steps, sms int) int {
	if blocks >= 2*sms {
		return 1
	}
	return max(1, min((2*sms+max(blocks, 1)-1)/max(blocks, 1), steps/(2*kspSteps), 32))
}

// ksPackedChunksFor is the chunk policy of the packed kernel:
// ksPackedChunks, which tests and benchmarks replace to run other choices.
var ksPackedChunksFor = ksPackedChunks
