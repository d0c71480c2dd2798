#!/bin/bash
# Session 44 run A (one GPU; asked for an H100): the new private-lookup example (examples/query) on the GPU
# engine, one query and batches of 64 and 1,024 queries; the circuit example's -engine gpu check ahead of the
# keys (AES-128 grouped by 2, new keys then saved keys); bootstrap's GPU tests in short mode.
# Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test circuit query && cd ..
for args in "-engine gpu" "-engine gpu -queries 64" "-engine gpu -queries 1024" "-engine gpu -queries 1024 -grouping 3" "-engine gpu -queries 1" "-engine gpu -queries 1 -grouping 3"; do
  echo "== $args" >> $R/query.log; timeout $(( $(left) - 330 )) .gpu/query $args >> $R/query.log 2>&1; echo "rc=$?" >> $R/query.log
done
grep -E '^==|^engine|^plan|^server|^answers|rc=' $R/query.log
mkdir -p /tmp/k2
for args in "-circuit aes128 -engine gpu -keys /tmp/k2 -grouping 2" "-circuit aes128 -engine gpu -keys /tmp/k2"; do
  echo "== $args" >> $R/circuits.log; timeout $(( $(left) - 280 )) .gpu/circuit $args >> $R/circuits.log 2>&1; echo "rc=$?" >> $R/circuits.log
done
grep -E '^==|^time|^output|rc=' $R/circuits.log | head -20
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/bootstrap.log | head
cd $OUT && tar czf run44a.tgz r && rm -rf r
