#!/bin/bash
# Session 46 run A (one GPU; asked for an H100): the MAJ gate and AddUint on it (fc8810c). gates' GPU tests
# in full mode (TestGatesGPUMatchCPU now runs MAJ in every batch and a 64-bit AddUint checked call by call
# against the CPU engine; Example_clientAndServer), BenchmarkAdder (AddUint against the AND/OR adder, CPU
# and GPU engines, TFHELib128 grouped by 3), the demo on the GPU twice. Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test demo && cd ..
s=$(date +%s); (cd gates && timeout $(( $(left) - 200 )) ../.gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1); echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|AddUint' $R/gates.log | head -30
s=$(date +%s); (cd gates && timeout $(( $(left) - 60 )) ../.gpu/gates.test -test.run '^$' -test.bench Adder -test.benchtime 5x -test.count 2 > $R/bench_adder.txt 2>&1); echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench_adder.txt
cat $R/bench_adder.txt
for i in 1 2; do s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/demo -engine gpu > $R/demo$i.log 2>&1; echo "demo rc=$? $(( $(date +%s)-s )) s" | tee -a $R/demo$i.log; grep -E "engine|\+|WRONG" $R/demo$i.log | head -5; done
cd $OUT && tar czf run46a.tgz r && rm -rf r
