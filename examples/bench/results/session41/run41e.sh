#!/bin/bash
# Session 41 run E (one GPU; asked for an H100): main at the session's last library change (each set of a
# circuit evaluation keeps its blind rotations apart on its own: EvalCircuits bit for bit EvalCircuitWith per
# set) on the committed fatbin d08bf256...: gates' GPU tests in full mode and Example_clientAndServer, then
# AES-128 through the circuit example grouped by 2: one block, then 32 blocks at once (EvalCircuits), and 32
# blocks with -concurrent (32 goroutines, EvalCircuitWith each, merged by the GPU engine).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test circuit && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/gates.log | head
mkdir -p /tmp/k2
for args in "-circuit aes128 -engine gpu -keys /tmp/k2 -grouping 2" "-circuit aes128 -engine gpu -keys /tmp/k2 -instances 32" "-circuit aes128 -engine gpu -keys /tmp/k2 -instances 32 -concurrent"; do
  echo "== $args" >> $R/circuits.log; timeout $(( $(left) - 5 )) .gpu/circuit $args >> $R/circuits.log 2>&1; echo "rc=$?" >> $R/circuits.log
done
grep -E '^==|^time|^plan|^output|match|rc=' $R/circuits.log | head -60
cd $OUT && tar czf run41e.tgz r && rm -rf r
