#!/bin/bash
# Session 33 run B: gpuntt's GPU tests after Transformer.Close became idempotent (the committed fatbin).
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,serial,driver_version --format=csv > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
.gpu/gpuntt.test -test.v -test.timeout=10m > $R/gpuntt.log 2>&1; echo "gpuntt rc=$?" | tee -a $R/gpuntt.log
grep -E -- '^--- (PASS|FAIL|SKIP)' $R/gpuntt.log
cd $OUT && tar czf run33b.tgz r && rm -rf r
