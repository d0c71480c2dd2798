#!/bin/bash
# Session 43 run C (one GPU; asked for an H100): the session's final library code (smallntt's field operations
# without branches on 386 and Reduce192 without a case on its high limb, gates' planning tables, the context
# push and pop); committed fatbin d08bf256...: bootstrap's GPU tests in short mode, AES-128 through the
# circuit example grouped by 2 (new keys, then the saved keys) and FP-lt, then two rounds of bench -gpus 1
# (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test circuit bench && cd ..
s=$(date +%s); timeout $(( $(left) - 300 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/bootstrap.log | head
mkdir -p /tmp/k2
for args in "-circuit aes128 -engine gpu -keys /tmp/k2 -grouping 2" "-circuit aes128 -engine gpu -keys /tmp/k2" "-circuit FP-lt -engine gpu -keys /tmp/k2"; do
  echo "== $args" >> $R/circuits.log; timeout $(( $(left) - 100 )) .gpu/circuit $args >> $R/circuits.log 2>&1; echo "rc=$?" >> $R/circuits.log
done
grep -E '^==|^time|^plan|^output|rc=' $R/circuits.log | head -40
for r in 1 2; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus 1 -out $R/bench$r > $R/bench$r.log 2>&1; echo "bench round $r rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$r.log
  grep -E 'batch +[0-9]|mJ|WRONG' $R/bench$r.log | head -6
done
cd $OUT && tar czf run43c.tgz r && rm -rf r
