#!/bin/bash
# The automatic choice against the row kernel forced at the K where sample_split takes over (K >= 4096 with fewer
# rows than a wave holds, and K >= 16384), and at rows off 16 bytes (K = 1001), at 1 GiB; one CSV with every type.
# usage: bash bench/run_split_vs_row.sh BUILD [runs]   (build-deps/bin/bfly-bench-BUILD)
set -u
b=$1; runs=${2:-20}
export BFLY_CACHE_DIR=/tmp/bfly-cache
run() {  # type, K list, algorithms
  d=/tmp/split-vs-row-$1; rm -rf $d; mkdir -p $d
  echo "=== bfly-bench-$b --types $1 --K $2 --algorithms $3 --runs $runs" | tee -a $OUT/split-vs-row.log
  build-deps/bin/bfly-bench-$b --types $1 --K $2 --algorithms $3 --runs $runs --out-dir $d >> $OUT/split-vs-row.log 2>&1
  for f in $d/*.csv; do awk -v bb=$b 'NR==1{print "build," $0; next}{print bb "," $0}' $f >> $OUT/split-vs-row.csv.tmp; done
}
run f32 1001,4096,4097,8192,16384 bfly-auto,bfly-addsub-w16
run f64 1001,4096,4097,8192,16384 bfly-auto,bfly-swap-w16
run bf16 4096,8192,16384 bfly-auto,bfly-pairs-w16
awk 'NR==1 || !/^build,/' $OUT/split-vs-row.csv.tmp > $OUT/split-vs-row.csv; rm $OUT/split-vs-row.csv.tmp
grep -E "of read|chooses" $OUT/split-vs-row.log | tail -40
