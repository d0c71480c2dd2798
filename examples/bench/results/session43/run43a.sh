#!/bin/bash
# Session 43 run A (asked for two H100s of one host, nvidia-h100-x2): kernels' calls now push and pop the
# context (the caller's current context left as found), torus' Encode/ModSwitch without divisions, the
# constant-time sampler's pairs, gates' parser tables; committed fatbin d08bf256...: kernels' GPU tests (the
# new TestContextLeavesThreadAsFound/gpu included), bootstrap's GPU tests in full mode (TestGPUMulti on every
# GPU), then bench -gpus NG and 1 (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
NG=$(nvidia-smi -L | wc -l)
s=$(date +%s); (cd kernels && timeout $(( $(left) - 330 )) ../.gpu/kernels.test -test.v -test.timeout=10m > $R/kernels.log 2>&1); echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log
echo "kernels: $(grep -c -- '^--- PASS' $R/kernels.log) passed, $(grep -c -- '^--- FAIL' $R/kernels.log) failed, $(grep -c -- '^--- SKIP' $R/kernels.log) skipped; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log)"
grep -E -- '--- FAIL|TestContext|TestNoThread|TestFailed' $R/kernels.log | head -20
s=$(date +%s); timeout $(( $(left) - 120 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL|--- (PASS|SKIP): TestGPUMulti' $R/bootstrap.log | head
for g in $NG 1; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|mJ|WRONG' $R/bench$g.log | head -6
  [ "$NG" = 1 ] && break
done
cd $OUT && tar czf run43a.tgz r && rm -rf r
