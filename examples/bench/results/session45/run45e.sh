#!/bin/bash
# Session 45 run E (one GPU; asked for an H100): the final library code. gates' GPU tests in full mode and
# Example_clientAndServer, whose server now decodes a compressed cloud key, checks its set and expands it
# before the GPU engine takes it; the demo on the GPU engine (the same path for its key). Committed fatbin
# d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test demo && cd ..
s=$(date +%s); timeout $(( $(left) - 120 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- (FAIL|PASS): Example' $R/gates.log | head
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/demo -engine gpu > $R/demo.log 2>&1; echo "demo rc=$? $(( $(date +%s)-s )) s" | tee -a $R/demo.log
head -12 $R/demo.log; grep -c WRONG $R/demo.log
cd $OUT && tar czf run45e.tgz r && rm -rf r
