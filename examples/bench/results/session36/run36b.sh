#!/bin/bash
# Session 36 run B (one GPU; asked for an H100): the code after this session's noise work (gates
# bootstraps x or -x at random; XOR sums of 8 terms by default grouped by 2, 6 by 3): gates'
# TestGatesGPUMatchCPU in full mode, AES-128 on one GPU grouped by 2 (three runs, then 32 blocks)
# and by 3 (two runs), and bench (TFHELib128 grouped by 3) at 1, 16,384 and 65,536 gates.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test bench circuit && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt
s=$(date +%s); timeout $(left) .gpu/gates.test -test.run 'GPU' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
grep -E -- '^(---|    ---)|FAIL' $R/gates.log | head -20
mkdir -p /tmp/k2 /tmp/k3
for args in "-keys /tmp/k2 -grouping 2" "-keys /tmp/k2" "-keys /tmp/k2" "-keys /tmp/k3 -grouping 3" "-keys /tmp/k3" "-keys /tmp/k2 -instances 32"; do
  echo "== $args" >> $R/aes.log; timeout $(( $(left) - 150 )) .gpu/circuit -circuit aes128 -engine gpu $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|^plan|^time|^output|rc=' $R/aes.log | head -40
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench1 > $R/bench1.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench1.log
grep -E 'batch +[0-9]|rc=|mJ' $R/bench1.log | head -12
cd $OUT && tar czf run36b.tgz r && rm -rf r
