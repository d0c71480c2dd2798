#!/bin/bash
# Session 37 run B (one GPU; asked for an H100): the final code (sign-balanced key-switching digits in every
# engine, fatbin d08bf256...; the noise model Gaussian again, XOR sums of 16 / 9 / 6 terms by default, no host-side
# negation in gates): gates' TestGatesGPUMatchCPU in full mode, AES-128 grouped by 2 (three runs), then the engine
# benchmark alternating the new fatbin (embedded) with session 33's cfd5bf30... (GOLDFHE_FATBIN, one-sided digits)
# to price the key-switching kernels' extra sign work: TFHELib128 grouped by 3 at 1, 16,384 and 65,536 gates, three
# pairs, and TFHErsDefault grouped by 3 at 16,384 gates (basebit 3 kernels), two pairs.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test bench circuit && cd ..
sha256sum kernels/goldfhe.fatbin .gpu/old.fatbin | tee $R/sums.txt
s=$(date +%s); timeout $(left) .gpu/gates.test -test.run 'GPU' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
grep -E -- '^(---|    ---)|FAIL' $R/gates.log | head -20
mkdir -p /tmp/k2
for args in "-keys /tmp/k2 -grouping 2" "-keys /tmp/k2" "-keys /tmp/k2"; do
  echo "== $args" >> $R/aes.log; timeout $(( $(left) - 200 )) .gpu/circuit -circuit aes128 -engine gpu $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|^plan|^time|^output|rc=' $R/aes.log | head -40
for rep in 1 2 3; do
  for v in new old; do
    if [ $v = old ]; then export GOLDFHE_FATBIN=$PWD/.gpu/old.fatbin; else unset GOLDFHE_FATBIN; fi
    s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench_${v}$rep > $R/bench_${v}$rep.log 2>&1; echo "bench $v rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench_${v}$rep.log
    grep -E 'batch +[0-9]|mJ' $R/bench_${v}$rep.log | head -6
  done
done
for rep in 1 2; do
  for v in new old; do
    if [ $v = old ]; then export GOLDFHE_FATBIN=$PWD/.gpu/old.fatbin; else unset GOLDFHE_FATBIN; fi
    timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHErsDefault -variants grouped3 -batches 16384 -reps 5 -max-gates 400000 -out $R/rs_${v}$rep > $R/rs_${v}$rep.log 2>&1; echo "rs $v rc=$?" | tee -a $R/rs_${v}$rep.log
    grep -E 'batch +[0-9]' $R/rs_${v}$rep.log | head -3
  done
done
unset GOLDFHE_FATBIN
cd $OUT && tar czf run37b.tgz r && rm -rf r
