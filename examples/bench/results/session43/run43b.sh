#!/bin/bash
# Session 43 run B (one GPU; asked for an H100): the session's tree with gates' planning tables past the
# inputs only and the context push and pop; committed fatbin d08bf256...: kernels' GPU tests (the context
# test's event now synchronized first), gates' GPU tests in full mode and Example_clientAndServer (the
# circuit example went to run C: the three binaries passed the device's 64 MiB limit).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); (cd kernels && timeout $(( $(left) - 300 )) ../.gpu/kernels.test -test.v -test.timeout=10m > $R/kernels.log 2>&1); echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log
echo "kernels: $(grep -c -- '^--- PASS' $R/kernels.log) passed, $(grep -c -- '^--- FAIL' $R/kernels.log) failed, $(grep -c -- '^--- SKIP' $R/kernels.log) skipped; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log)"
grep -E -- '--- FAIL|--- (PASS|FAIL): TestContext.*gpu' $R/kernels.log | head -20
s=$(date +%s); timeout $(( $(left) - 120 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL' $R/gates.log | head
cd $OUT && tar czf run43b.tgz r && rm -rf r
