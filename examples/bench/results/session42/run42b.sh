#!/bin/bash
# Session 42 run B (one GPU; asked for an H100): session 42's tree after the reviews (keys behind pointers, Batch outputs by array, the noise model's margins) on the
# committed fatbin d08bf256...: bootstrap's GPU tests in short mode (the dropped-engine tests too), gates' GPU tests in full
# mode and Example_clientAndServer, then AES-128 through the circuit example grouped by 2 (new keys, then
# the saved keys) and FP-lt on its known answers.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test gates.test circuit && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL|^--- (PASS|SKIP)|batch 10000' $R/gates.log | head -20
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
mkdir -p /tmp/k2
for args in "-circuit aes128 -engine gpu -keys /tmp/k2 -grouping 2" "-circuit aes128 -engine gpu -keys /tmp/k2" "-circuit FP-lt -engine gpu -keys /tmp/k2"; do
  echo "== $args" >> $R/circuits.log; timeout $(( $(left) - 5 )) .gpu/circuit $args >> $R/circuits.log 2>&1; echo "rc=$?" >> $R/circuits.log
done
grep -E '^==|^time|^plan|^output|rc=' $R/circuits.log | head -40
cd $OUT && tar czf run42b.tgz r && rm -rf r
