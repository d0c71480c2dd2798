#!/bin/bash
# Session 46 run G (one GPU; asked for an H100): the final library code (AddUint taking the ripple where folded
# operand bits make it shorter; the GPU test counting the engine calls of its 64-bit AddUint). gates' GPU tests in full mode (a 64-bit AddUint checked call by call against
# the CPU engine on every set and grouping; MAJ in every batch), the demo on the GPU twice (its 8-bit add
# carry-select too). Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test demo && cd ..
s=$(date +%s); (cd gates && timeout $(( $(left) - 60 )) ../.gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1); echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log); AddUint lines right: $(grep -c 'AddUint.*right, GPU = CPU' $R/gates.log)"
grep -E -- '--- FAIL' $R/gates.log | head; grep -m2 'AddUint' $R/gates.log
for i in 1 2; do s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/demo -engine gpu > $R/demo$i.log 2>&1; echo "demo rc=$? $(( $(date +%s)-s )) s" | tee -a $R/demo$i.log; grep -E "\+|WRONG" $R/demo$i.log | head -3; done
cd $OUT && tar czf run46g.tgz r && rm -rf r
