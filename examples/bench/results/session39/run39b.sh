#!/bin/bash
# Session 39 run B (one GPU; asked for an H100): the final code after a review (the alias check exact for key
# switching, the CPU plan built once in New) with the committed fatbin d08bf256... (no
# GOLDFHE_FATBIN): bootstrap's GPU tests and gates' TestGatesGPUMatchCPU in full mode (bit-exact with the CPU
# engine), gates' Example_clientAndServer on the GPU (bootstrap.New), BenchmarkCheckAliases on this host's CPU.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test gates.test && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Alias' -test.v -test.timeout=60m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/bootstrap.log $R/gates.log | head -40
.gpu/bootstrap.test -test.run '^$' -test.bench CheckAliases -test.count 3 > $R/alias.log 2>&1; grep Bench $R/alias.log
cd $OUT && tar czf run39b.tgz r && rm -rf r
