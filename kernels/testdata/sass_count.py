# Local SASS count of the wide blind rotation (kernels/NOTES.md): warp
# instructions per CMux step and sample of goldfhe_bs_wide_8x8x16_k1_l3_t64,
# each barrier-to-barrier segment weighted by its warp-iterations (A1 24,
# A2 24, A3 12, B 32, C3 4, C2 8, C1 8: 384 threads, 64 per polynomial).
#   cuobjdump -sass -fun goldfhe_bs_wide_8x8x16_k1_l3_t64 x.cubin > x.sass
#   python3 kernels/testdata/sass_count.py x.sass [24,24,12,32,4,8,8]
# (the second argument: other weights, e.g. B 64 for one thread per
# position and column; A1 12 since session 17, whose stage-1 loop is
# unrolled: one pass of the segment holds a thread's two transforms).
# Segments end at each BAR.SYNC and at a __syncwarp between stages (a
# WARPSYNC with no BAR.SYNC after it). It also gives the pipe model of kernels/NOTES.md
# session 11: the cycles the SM sub-partitions' FMA pipes, ALU pipes and
# issue slots spend per step (summed over the four), at the rates
# kernels/testdata/pipes.cu measures: IMAD.WIDE and IMAD.HI 4 cycles of
# the FMA pipe, every other IMAD (.MOV, .X, .IADD, ...) 2, each ALU
# instruction 2 of the ALU pipe, every instruction one issue slot.
import re, sys, collections
# usage: count.py file.sass [kernel]
ALU = {'IADD3','LOP3','SHF','SEL','ISETP','LEA','PRMT','IMNMX','FLO','POPC','PLOP3','P2R','R2P','IABS','BREV','SGXT','BMSK','LEA.HI','ICMP','VIADD','IADD'}
def cat(op):
    base = op.split('.')[0]
    if base == 'IMAD':
        return 'FMAW' if '.WIDE' in op else 'FMA'
    if base in ALU: return 'ALU'
    if base in ('LDS','STS','LDG','STG','LD','ST','LDL','STL','ATOMS'): return 'LSU'
    if base in ('MOV','S2R','CS2R','S2UR','ULDC','UMOV','R2UR','NOP','BAR','BRA','WARPSYNC','BSSY','BSYNC','EXIT','ULOP3','UIADD3','USHF','UIMAD','ULEA','UISETP','USEL','DEPBAR','YIELD'):
        if base.startswith('U') or base in ('S2UR','R2UR','ULDC'): return 'UNI'
        return 'MISC'
    return 'OTHER:'+base
def pipe_cycles(op):
    """(FMA-pipe, ALU-pipe) cycles of one warp instruction."""
    if op.startswith('IMAD.WIDE') or op.startswith('IMAD.HI'):
        return 4, 0
    if op.startswith('IMAD'):
        return 2, 0
    return (0, 2) if cat(op) == 'ALU' else (0, 0)
lines = open(sys.argv[1]).read().split('\n')
ins = []
for l in lines:
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)\s*(.*?);', l)
    if m:
        ins.append((int(m.group(1),16), m.group(3), m.group(4), l))
addr_idx = {a:i for i,(a,_,_,_) in enumerate(ins)}
# Segment ends: every BAR.SYNC (block and named barriers), and a WARPSYNC
# that no BAR.SYNC follows (a __syncwarp between two stages, as between
# the t64 kernels' forward stages 2 and 3 since session 16).
bars = [i for i,(a,op,_,_) in enumerate(ins)
        if op.startswith('BAR.SYNC') or (op.startswith('WARPSYNC') and not (i + 1 < len(ins) and ins[i+1][1].startswith('BAR.SYNC')))]
# iter loop: the backward branch after the last-but-one BAR... find branch target of the branch just after the 8th bar
# segments: from bars[1]+1 .. bars[8] inclusive (7 segments, A1..C1) for bsw kernels with 9 bars
W = [float(x) for x in sys.argv[2].split(',')] if len(sys.argv) > 2 else [24,24,12,32,4,8,8]
nseg = len(W)
tot = collections.Counter(); names=['A1','A2','A3','B','C3','C2','C1']
pipes = []  # per segment: FMA cycles, ALU cycles, issue slots
# find the iter loop start: the backward branch after bars[nseg+1-?]
start = bars[0]+1
seg_bounds = []
for s in range(nseg):
    seg_bounds.append((start, bars[s+1]))
    start = bars[s+1]+1
for s,(b,e) in enumerate(seg_bounds):
    # find backward loops inside segment
    c_in = collections.Counter(); c_out = collections.Counter()
    loops = []
    for i in range(b, e+1):
        a,op,args,_ = ins[i]
        if op == 'BRA':
            t = re.match(r'(0x[0-9a-f]+)', args.strip())
            if t:
                ta = int(t.group(1),16)
                if ta < a and ta in addr_idx and addr_idx[ta] >= b:
                    loops.append((addr_idx[ta], i))
    w = W[s]
    pc = [0.0, 0.0, 0.0]
    for i in range(b, e+1):
        op = ins[i][1]
        inloop = any(lb <= i <= le for lb,le in loops)
        (c_in if inloop else c_out)[cat(op)] += 1
        wi = w if (inloop or not loops) else 12
        f, a = pipe_cycles(op)
        pc[0] += f*wi; pc[1] += a*wi; pc[2] += wi
    pipes.append(pc)
    # outside-loop: weight 12 warps (all), in-loop: w
    seg = collections.Counter()
    if loops:
        for k,v in c_in.items(): seg[k] += v*w
        for k,v in c_out.items(): seg[k] += v*12
    else:
        for k,v in c_out.items(): seg[k] += v*w
    tot += seg
    body = sum(c_in.values()) if loops else sum(c_out.values())
    print(f"{names[s] if s<7 else s}: loops={len(loops)} body={body} out={sum(c_out.values())} body ALU={c_in['ALU'] if loops else c_out['ALU']} FMA={c_in['FMA'] if loops else c_out['FMA']} FMAW={c_in['FMAW'] if loops else c_out['FMAW']} LSU={c_in['LSU'] if loops else c_out['LSU']} weighted total={sum(seg.values()):.0f} ALU={seg['ALU']:.0f}")
print("per CMux step per sample (warp instr): total=%d ALU=%d FMA=%d FMAW=%d LSU=%d MISC=%d UNI=%d other=%s" % (sum(tot.values()), tot['ALU'], tot['FMA'], tot['FMAW'], tot['LSU'], tot['MISC'], tot['UNI'], {k:v for k,v in tot.items() if k.startswith('OTHER')}))
f, a, t = (sum(p[i] for p in pipes) for i in range(3))
print("pipes per CMux step per sample (cycles summed over the four sub-partitions; /4: an SM's): FMA=%.0f ALU=%.0f issue=%.0f" % (f, a, t))
print("  " + "  ".join("%s %.0f/%.0f/%.0f" % (names[s] if s < 7 else s, *p) for s, p in enumerate(pipes)) +
      "  (sum of each phase's largest %.0f)" % sum(max(p) for p in pipes))
