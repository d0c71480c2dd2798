#!/bin/bash
# Session 42 run D (asked for two H100s of one host, nvidia-h100-x2): the session's final library code on the
# committed fatbin d08bf256...: bootstrap's GPU tests in full mode; nttbench -quick with each GPU case now
# checked on 1,031 polynomials; bench with every output now compared bit for bit across batch sizes and
# plans (TFHELib128, every GPU variant); then bench grouped by 3 on all GPUs and on one.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bootstrap.test bench nttbench && cd ..
NG=$(nvidia-smi -L | wc -l)
s=$(date +%s); timeout $(( $(left) - 300 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/bootstrap.log | head
s=$(date +%s); timeout $(( $(left) - 240 )) .gpu/nttbench -quick -gpu -out $R/ntt > $R/ntt.log 2>&1; echo "nttbench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/ntt.log
grep -iE 'differs|error|fail' $R/ntt.log | head -5
s=$(date +%s); timeout $(( $(left) - 90 )) .gpu/bench -engine gpu -sets TFHELib128 -variants default,grouped,grouped3,fused,wide,unfused,butterfly -batches 1,132,1024,4096,16384 -reps 3 -max-gates 60000 -out $R/variants > $R/variants.log 2>&1; echo "bench variants rc=$? $(( $(date +%s)-s )) s" | tee -a $R/variants.log
grep -E 'WRONG|FAILED|batch  16384' $R/variants.log | head -12
for g in $NG 1; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|mJ|WRONG' $R/bench$g.log | head -6
  [ "$NG" = 1 ] && break
done
cd $OUT && tar czf run42d.tgz r && rm -rf r
