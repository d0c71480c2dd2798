#!/bin/bash
# Session 45 run C (one GPU; asked for an H100): kernels' tests with require.NoError / require.ErrorIs in
# place of must / wantErr (d662e2b), and gates' GPU tests with Example_clientAndServer sending a compressed
# cloud key (1a6e1d5), which the server expands and hands to the GPU engine. Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout $(( $(left) - 250 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- (FAIL|PASS): Example' $R/gates.log | head
s=$(date +%s); (cd kernels && timeout $(( $(left) - 5 )) ../.gpu/kernels.test -test.v -test.timeout=10m > $R/kernels.log 2>&1); echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log
echo "kernels: $(grep -c -- '^--- PASS' $R/kernels.log) passed, $(grep -c -- '^--- FAIL' $R/kernels.log) failed, $(grep -c -- '^--- SKIP' $R/kernels.log) skipped; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log)"
grep -E -- '--- FAIL' $R/kernels.log | head -20
cd $OUT && tar czf run45c.tgz r && rm -rf r
