#!/bin/bash
# Session 41 run C (asked for two H100s of one host): the final library code of session 41 (engines closed by the
# collector when dropped: CPU, GPU and Multi as handles over cores; gates: copies made apart and Constant inputs
# as repeats, a negated engine input a NOT, a third MUX site on the halves of MUX(s, not b, not c)) on the
# committed fatbin d08bf256...:
# bootstrap's GPU tests in full mode (TestGPUMulti on 2 GPUs, TestGPUMatchesCPU bit-exact), gates' GPU tests
# in full mode, then bench -gpus 2 and -gpus 1 (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep "Model name"; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '^--- (FAIL|SKIP)|^    --- FAIL' $R/bootstrap.log | head
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/gates.log | head
for g in 2 1; do
  s=$(date +%s); timeout $(( $(left) - 10 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ|gates/s' $R/bench$g.log | head -12
done
cd $OUT && tar czf run41c.tgz r && rm -rf r
