# Pipe model of the wide blind rotation's SASS (kernels/NOTES.md, session
# 11): per CMux step and sample of goldfhe_bs_wide_8x8x16_k1_l3_t64_g2/_g3,
# the cycles the SM sub-partitions' FMA pipes, ALU pipes and issue slots
# spend (summed over the four), counting IMAD.WIDE and IMAD.HI as 4 cycles and every other IMAD
# (IMAD.MOV, IMAD.X, IMAD.IADD, ...) as 2 on the FMA pipe, each ALU
# instruction (IADD3, LOP3, SHF, SEL, ...) as 2 on the ALU pipe
# (kernels/testdata/pipes.cu measures those rates), and every instruction
# as one issue slot. Each barrier-to-barrier segment's loop body is
# weighted by its warp-iterations as in sass_count.py (A1 24, A2 24, A3 12,
# B 32, C3 4, C2 8, C1 8 for 384 threads; pass other weights as the second
# argument, e.g. B 64 for one thread per position and column).
#   cuobjdump -sass -fun goldfhe_bs_wide_8x8x16_k1_l3_t64_g3 x.cubin > x.sass
#   python3 kernels/testdata/pipe_count.py x.sass [24,24,12,32,4,8,8]
import re
import sys

ALU = {'IADD3', 'LOP3', 'SHF', 'SEL', 'ISETP', 'LEA', 'PRMT', 'IMNMX', 'FLO', 'POPC', 'PLOP3', 'P2R', 'R2P',
       'IABS', 'BREV', 'SGXT', 'BMSK', 'ICMP', 'VIADD', 'IADD'}
NAMES = ['A1', 'A2', 'A3', 'B', 'C3', 'C2', 'C1']


def cycles(op):
    """(FMA-pipe, ALU-pipe) cycles of one warp instruction."""
    if op.startswith('IMAD.WIDE') or op.startswith('IMAD.HI'):
        return 4, 0
    if op.startswith('IMAD'):
        return 2, 0
    if op.split('.')[0] in ALU:
        return 0, 2
    return 0, 0


def main():
    weights = [float(x) for x in sys.argv[2].split(',')] if len(sys.argv) > 2 else [24, 24, 12, 32, 4, 8, 8]
    ins = []
    for line in open(sys.argv[1]):
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)\s*(.*?);', line)
        if m:
            ins.append((int(m.group(1), 16), m.group(3), m.group(4)))
    index = {a: i for i, (a, _, _) in enumerate(ins)}
    bars = [i for i, (_, op, _) in enumerate(ins) if op.startswith('BAR.SYNC')]
    if len(bars) < len(NAMES) + 1:
        sys.exit('pipe_count: fewer barriers than the wide kernel has; is this goldfhe_bs_wide_*?')
    total = [0.0, 0.0, 0.0]
    parts = []
    start = bars[0] + 1
    for s, name in enumerate(NAMES):
        b, e = start, bars[s + 1]
        start = e + 1
        loops = []
        for i in range(b, e + 1):
            a, op, args = ins[i]
            t = re.match(r'(0x[0-9a-f]+)', args.strip()) if op == 'BRA' else None
            if t and int(t.group(1), 16) < a and index.get(int(t.group(1), 16), -1) >= b:
                loops.append((index[int(t.group(1), 16)], i))
        seg = [0.0, 0.0, 0.0]
        for i in range(b, e + 1):
            inside = any(lo <= i <= hi for lo, hi in loops)
            w = weights[s] if inside or not loops else 12  # outside a loop: every warp once
            f, a = cycles(ins[i][1])
            seg[0] += f * w
            seg[1] += a * w
            seg[2] += w
        parts.append((name, seg))
        total = [x + y for x, y in zip(total, seg)]
    print('per CMux step and sample, cycles summed over the four sub-partitions (/4: an SM\'s): '
          'FMA %.0f  ALU %.0f  issue %.0f' % tuple(total))
    print('  ' + '  '.join('%s %.0f/%.0f/%.0f' % (n, *seg) for n, seg in parts))
    print('  sum of each phase\'s largest: %.0f' % sum(max(seg) for _, seg in parts))


main()
