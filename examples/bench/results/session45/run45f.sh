#!/bin/bash
# Session 45 run F (one GPU; asked for an H100): the final library code, after the compressed keys' refactoring
# of key generation (plain keys byte for byte the same); committed fatbin d08bf256...: bootstrap's GPU tests in
# full mode (TestGPUMatchesCPU bit-exact with the CPU engine).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=6m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
echo "TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/bootstrap.log | head
cd $OUT && tar czf run45f.tgz r && rm -rf r
