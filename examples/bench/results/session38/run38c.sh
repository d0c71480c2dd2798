#!/bin/bash
# Session 38 run C (one GPU; asked for an H100): the final code (field operations by masks, the cloud-key check with
# one comparison, power-of-two Encode, HexBits without branches) with the committed fatbin d08bf256...: bootstrap's
# GPU tests and gates' TestGatesGPUMatchCPU in full mode, bit-exact with the CPU engine.
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test gates.test && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout 300 .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
s=$(date +%s); timeout 200 .gpu/gates.test -test.run 'GPU' -test.v -test.timeout=5m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP): (TestGPUMatchesCPU|TestGPUDigest|TestGatesGPUMatchCPU)' $R/bootstrap.log $R/gates.log | head -20
cd $OUT && tar czf run38c.tgz r && rm -rf r
