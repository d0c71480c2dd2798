#!/bin/bash
# Session 38 run B (one GPU; asked for an H100): the final Go code (constant-time Gaussian sampler: new seeded
# keys) with the committed fatbin d08bf256... (no GOLDFHE_FATBIN): bootstrap's GPU tests and gates'
# TestGatesGPUMatchCPU in full mode (bit-exact with the CPU engine), AES-128 grouped by 2 (keys generated there,
# then a second run on the same keys), and the engine benchmark, TFHELib128 grouped by 3 at 1, 16,384 and 65,536
# gates, three times.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test gates.test bench circuit && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.v -test.timeout=60m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
s=$(date +%s); timeout $(( $(left) - 100 )) .gpu/gates.test -test.run 'GPU' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/bootstrap.log $R/gates.log | head -30
mkdir -p /tmp/k2
for args in "-keys /tmp/k2 -grouping 2" "-keys /tmp/k2"; do
  echo "== $args" >> $R/aes.log; timeout $(( $(left) - 60 )) .gpu/circuit -circuit aes128 -engine gpu $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|^plan|^time|^output|rc=' $R/aes.log | head -20
for rep in 1 2 3; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench$rep > $R/bench$rep.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$rep.log
  grep -E 'batch +[0-9]|mJ' $R/bench$rep.log | head -6
done
cd $OUT && tar czf run38b.tgz r && rm -rf r
