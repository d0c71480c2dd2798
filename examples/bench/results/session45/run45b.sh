#!/bin/bash
# Session 45 run B (one GPU; asked for an H100): the tests' error checks through testify (1654414); committed
# fatbin d08bf256...: gates' GPU tests in full mode and Example_clientAndServer, gpuntt's GPU tests.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL' $R/gates.log | head
s=$(date +%s); (cd kernels/gpuntt && timeout $(( $(left) - 5 )) ../../.gpu/gpuntt.test -test.v -test.timeout=5m > $R/gpuntt.log 2>&1); echo "gpuntt rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gpuntt.log
echo "gpuntt: $(grep -c -- '^--- PASS' $R/gpuntt.log) passed, $(grep -c -- '^--- FAIL' $R/gpuntt.log) failed, $(grep -c -- '^--- SKIP' $R/gpuntt.log) skipped"
grep -E -- '--- FAIL' $R/gpuntt.log | head
cd $OUT && tar czf run45b.tgz r && rm -rf r
