#!/bin/bash
# Session 40 run B (one GPU; asked for an H100): this session's final library code with the committed fatbin
# d08bf256... (no GOLDFHE_FATBIN): seeded keys now bound to their set and secret key (new keys and inputs
# throughout), NewGPU's device check, Multi's split start: bootstrap's GPU tests in full mode (bit-exact with the
# CPU engine, TestGPUDigest against the CPU's new digest), gates' GPU tests and Example_clientAndServer, then
# `make bench` as it is (bench -out DIR, every set and variant) for BENCHMARKS' "At a glance".
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test gates.test bench && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout $(( $(left) - 300 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Alias' -test.v -test.timeout=60m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
s=$(date +%s); timeout $(( $(left) - 260 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/bootstrap.log $R/gates.log | head -40
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -out $R/makebench > $R/makebench.log 2>&1; echo "make bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/makebench.log
grep -E 'rc=|FAIL|WRONG' $R/makebench.log | head; sed -n '1,40p' $R/makebench/summary.txt
cd $OUT && tar czf run40b.tgz r && rm -rf r
