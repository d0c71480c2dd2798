#!/bin/bash
# Session 43 run D (one GPU; asked for an H100): the session's final tree (library code as run C's 30edd80;
# smallntt's Reduce192 without a case on its high limb serves the CPU matrix plans that nttbench checks the
# GPU against); committed fatbin d08bf256...: bootstrap's GPU tests in full mode, gpuntt's GPU tests, then
# nttbench -quick -gpu (every GPU case checked on 1,031 polynomials against the CPU transform).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test nttbench && cd ..
s=$(date +%s); timeout $(( $(left) - 200 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped; TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/bootstrap.log | head
s=$(date +%s); timeout $(( $(left) - 120 )) .gpu/gpuntt.test -test.v -test.timeout=5m > $R/gpuntt.log 2>&1; echo "gpuntt rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gpuntt.log
echo "gpuntt: $(grep -c -- '^--- PASS' $R/gpuntt.log) passed, $(grep -c -- '^--- FAIL' $R/gpuntt.log) failed, $(grep -c -- '^--- SKIP' $R/gpuntt.log) skipped"
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/nttbench -quick -gpu -out $R/ntt > $R/ntt.log 2>&1; echo "nttbench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/ntt.log
grep -iE 'differ|error|fail' $R/ntt.log | head -5
cd $OUT && tar czf run43d.tgz r && rm -rf r
