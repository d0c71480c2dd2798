#!/bin/bash
# Session 41 run A (asked for two H100s of one host): main with the session's library changes (gates: blind
# rotations of one batch or circuit kept distinct by negation; bootstrap: a failed pass's stream waited for,
# earlier passes written, a fault met in the drain reported; Multi.Close waits for its workers; kernels: an
# image's declared sizes checked before the driver reads it) on the committed fatbin d08bf256...:
# bootstrap's GPU tests in full mode (TestGPUMulti on 2 GPUs, TestGPUMatchesCPU bit-exact), gates' GPU tests
# in full mode, a truncated GOLDFHE_FATBIN on the real driver, then bench -gpus 2 and -gpus 1 (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep "Model name"; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '^--- (FAIL|SKIP)|^    --- FAIL' $R/bootstrap.log | head
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/gates.log | head
F=$(ls kernels/*.fatbin | head -1); sha256sum $F | tee $R/fatbin.txt
for cut in 4096 $(( $(stat -c %s $F) / 2 )) $(( $(stat -c %s $F) - 1 )); do
  head -c $cut $F > /tmp/trunc.fatbin
  echo "== GOLDFHE_FATBIN truncated to $cut bytes" >> $R/fatbin.txt
  GOLDFHE_FATBIN=/tmp/trunc.fatbin timeout 60 .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1 -reps 1 -out /tmp/bt >> $R/fatbin.txt 2>&1; echo "rc=$?" >> $R/fatbin.txt
done
grep -E '^==|rc=|fatbin|refus|image' $R/fatbin.txt | head -20
for g in 2 1; do
  s=$(date +%s); timeout $(( $(left) - 10 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ|gates/s' $R/bench$g.log | head -12
done
cd $OUT && tar czf run41a.tgz r && rm -rf r
