#!/bin/bash
# Session 44 run D (one GPU; asked for an H100): the session's final tree. gates' GPU tests in full mode and
# Example_clientAndServer; bootstrap's GPU tests in short mode. Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL' $R/gates.log | head
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/bootstrap.log | head
cd $OUT && tar czf run44d.tgz r && rm -rf r
