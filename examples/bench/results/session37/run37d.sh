#!/bin/bash
# Session 37 run D (one GPU; asked for an H100): the key-switching kernels alone (kernels' BenchmarkKeySwitch,
# TFHELib128's shape, random table and inputs) with the committed fatbin d08bf256... (sign-balanced digits) alternated
# with session 33's cfd5bf30... (GOLDFHE_FATBIN, one-sided digits), two rounds: the engine's own choice at 1 and
# 16,384 samples, and the untiled, tiled and packed kernels at 1 and 16,384.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 500 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x kernels.test && cd ..
sha256sum kernels/goldfhe.fatbin .gpu/old.fatbin | tee $R/sums.txt
cd kernels
for rep in 1 2; do
  for v in new old; do
    if [ $v = old ]; then export GOLDFHE_FATBIN=$PWD/../.gpu/old.fatbin; else unset GOLDFHE_FATBIN; fi
    timeout $(left) ../.gpu/kernels.test -test.run '^$' -test.bench 'KeySwitch$/^(count=1|count=16384)$' -test.benchtime 200x > $R/ks_${v}$rep.log 2>&1
    timeout $(left) ../.gpu/kernels.test -test.run '^$' -test.bench 'KeySwitch$/^(untiled|tiled|packed)$/^count=(1|16384)$' -test.benchtime 200x >> $R/ks_${v}$rep.log 2>&1
    echo "== $v $rep"; grep -E '^Benchmark' $R/ks_${v}$rep.log
  done
done
unset GOLDFHE_FATBIN
cd $OUT && tar czf run37d.tgz r && rm -rf r
