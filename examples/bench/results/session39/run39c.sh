#!/bin/bash
# Session 39 run C (one GPU; asked for an H100): the final tree, committed fatbin d08bf256... (no GOLDFHE_FATBIN):
# AES-128 through the circuit example grouped by 2 (keys saved to a
# folder by the new both-or-neither save, then a second run loading them). (bench and gates' tests left out: with
# them the working tree passed the device tool's 64 MiB; gates' GPU tests ran in run B, and no GPU path changed since.)
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x circuit && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
mkdir -p /tmp/k2
for args in "-keys /tmp/k2 -grouping 2" "-keys /tmp/k2"; do
  echo "== $args" >> $R/aes.log; timeout $(( $(left) - 100 )) .gpu/circuit -circuit aes128 -engine gpu $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
ls -la /tmp/k2 >> $R/aes.log
grep -E '^==|^plan|^time|^output|rc=|key' $R/aes.log | head -20
cd $OUT && tar czf run39c.tgz r && rm -rf r
