#!/bin/bash
# bfly-bench of several builds side by side on the device (build-deps/bin/bfly-bench-<build>, carried), each
# sweep repeated, the builds interleaved, in one CSV per type ($OUT/variants-<type>.csv, a build and a repeat column
# first) and a table of the fraction of the read ceiling last. Built here, one build folder per tree, e.g.
#   cmake -S . -B build-e1 -G Ninja -DBFLY_BUILD_BENCH=ON -DBFLY_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90
#   ninja -C build-e1 bfly-bench && cp build-e1/bench/bfly-bench build-deps/bin/bfly-bench-e1
# usage: [K_f32=LIST ...] bash bench/run_variants.sh "e0 e1" "f32 bf16" [runs] [repeats]
# The K of type t come from $K_<t> where it is set, else from the lists below.
set -u
variants=$1; types=$2; runs=${3:-15}; repeats=${4:-1}
export BFLY_CACHE_DIR=/tmp/bfly-cache
klist() { local own=K_$1; [[ -n "${!own:-}" ]] && { echo "${!own}"; return; }; case $1 in
  f32) echo 16,32,64,71,100,128,200,256,512,1000,1024,2000,2048,3000,4096;;
  bf16|f16) echo 16,32,64,100,128,200,256,512,1000,1024,2000,2048,3000,4094;;
  f64) echo 16,64,128,256,512,1000,1024,2048,4096,4097;;
esac; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
for t in $types; do
  for rep in $(seq 1 $repeats); do
    for v in $variants; do
      d=/tmp/out-$v-$t-$rep; rm -rf $d; mkdir -p $d
      echo "=== $v $t repeat $rep: bfly-bench-$v --types $t --K $(klist $t) --algorithms bfly-auto --runs $runs" | tee -a $OUT/variants.log
      build-deps/bin/bfly-bench-$v --types $t --K $(klist $t) --algorithms bfly-auto --runs $runs --out-dir $d >> $OUT/variants.log 2>&1
      for f in $d/*.csv; do awk -v v=$v -v r=$rep 'NR==1{print "build,repeat," $0; next}{print v "," r "," $0}' $f >> $OUT/variants-$t.csv.tmp; done
    done
  done
  awk 'NR==1 || !/^build,/' $OUT/variants-$t.csv.tmp > $OUT/variants-$t.csv; rm $OUT/variants-$t.csv.tmp
done
python3 "$(dirname "$0")/variants_table.py" $OUT/variants-*.csv
