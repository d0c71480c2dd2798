#!/bin/bash
# Session 27 run C: ptxas --register-usage-level (0, default 5, 10) on the flat kernel: three sm_90 fatbins of main, built side by side; SASS counts; f256_g3 at 3,960 samples, alternated rounds.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; nvcc --version | tail -2; } > $R/gpu.txt; cat $R/gpu.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
G="-gencode arch=compute_90,code=sm_90"
for L in 0 5 10; do ( s=$(date +%s); nvcc -fatbin -O3 -std=c++17 $G -Xptxas -v -Xptxas --register-usage-level=$L -o /tmp/l$L.fatbin kernels/goldfhe.cu > $R/build_l$L.log 2>&1; echo "L=$L rc=$? $(( $(date +%s)-s )) s" >> $R/build_l$L.log ) & done
wait
K=goldfhe_bs_wide_8x8x16_k1_l3_f256_g3
for L in 0 5 10; do tail -1 $R/build_l$L.log; grep -A2 "$K' for" $R/build_l$L.log | grep -E 'Used|spill' | tr '\n' ' '; echo; cuobjdump -sass -fun $K /tmp/l$L.fatbin > $R/l$L.sass; echo "L=$L $(grep -cE '^\s+/\*[0-9a-f]{4,5}\*/' $R/l$L.sass) instructions, md5 $(md5sum < $R/l$L.sass | cut -c1-12)"; done
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks_throttle_reasons.sw_power_cap,temperature.gpu --format=csv -lms 250 > $R/smi.csv &
SMI=$!
V="5"; for L in 0 10; do cmp -s $R/l$L.sass $R/l5.sass && echo "L=$L: the flat kernel's SASS is L=5's, not benched" || V="$V $L"; done
for round in 1 2 3; do for L in $V; do
  echo "== L=$L round $round $(date +%T.%N)" >> $R/kbench.log
  (cd kernels && GOLDFHE_FATBIN=/tmp/l$L.fatbin GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench "BlindRotate/wide_8x8x16_k1_l3_f256_g3/" -test.benchtime 20x) >> $R/kbench.log 2>&1
done; done
kill $SMI
grep -E "^==|ns/op" $R/kbench.log
tar -C $OUT -cJf $OUT/x.tar.xz r
