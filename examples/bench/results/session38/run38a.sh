#!/bin/bash
# Session 38 run A (one GPU; asked for an H100): the tiled key-switching kernel negates each sample's
# accumulator before and after a coordinate's levels instead of each term. make fatbin of the working tree
# (nvcc -t 0), make gpu-test against that fatbin (GOLDFHE_FATBIN; TestFatbinSourceHash fails by design: the
# test binaries embed the committed fatbin d08bf256...), with the Go side of a1718d3 (constant-time Gaussian
# sampler: new seeded keys), then kernels' BenchmarkKeySwitch, the new fatbin alternated with the committed
# one, two rounds: the engine's own choice at 8-48 samples (the tiled kernel's range) and the tiled kernel
# forced at 16, 66 and 16,384. The new fatbin comes back xz-compressed.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 580 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); make fatbin NVCC="nvcc -t 0" > $R/fatbin.log 2>&1; echo "fatbin rc=$? $(( $(date +%s)-s )) s" | tee -a $R/fatbin.log
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
cp kernels/goldfhe.fatbin $OUT/goldfhe.fatbin && xz -T8 -6 $OUT/goldfhe.fatbin
NEW=$PWD/kernels/goldfhe.fatbin
export GOLDFHE_FATBIN=$NEW
s=$(date +%s); timeout 400 make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); bootstrap TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gpuntt TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/gpuntt.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL' $R/*.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestKeySwitch|TestGatesGPUMatchCPU|TestGPUMatchesCPU|TestGPUFault|TestGPUDigest)' $R/kernels.log $R/gates.log $R/bootstrap.log | head -40
cd kernels
for rep in 1 2; do
  for v in new old; do
    [ $(left) -lt 30 ] && break 2
    if [ $v = new ]; then export GOLDFHE_FATBIN=$NEW; else unset GOLDFHE_FATBIN; fi
    timeout $(left) ../.gpu/kernels.test -test.run '^$' -test.bench 'KeySwitch$/^(count=(8|16|32|48)|tiled/count=(16|66|16384))$' -test.benchtime 200x > $R/ks_${v}$rep.log 2>&1
    echo "== $v $rep"; grep -E '^Benchmark' $R/ks_${v}$rep.log
  done
done
unset GOLDFHE_FATBIN
cd $OUT && tar czf run38a.tgz r && rm -rf r
