#!/bin/bash
# bfly-bench at chosen row counts on the device: how a launch's time grows with M at one K (whole waves of CTAs
# against a few CTAs more), and what sample_split takes for the rows past the last whole wave. Each argument after
# the build is TYPE:K:M1,M2,...[:ALGORITHMS] (algorithms default bfly-auto); one bfly-bench run each, one CSV
# ($OUT/rows.csv) and a table last: the median ms and the fraction of the read ceiling of each point.
#   bash bench/run_rows.sh BUILD f64:3925:33792,34196 f64:3925:404,2000:bfly-split-w32 ...
set -u
build=$1; shift
export BFLY_CACHE_DIR=/tmp/bfly-cache
out=${OUT:-bench/results}; runs=${RUNS:-10}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
for point in "$@"; do
  IFS=: read -r t k ms algorithms <<< "$point"; algorithms=${algorithms:-bfly-auto}
  d=/tmp/rows-$t-$k-$RANDOM; rm -rf $d; mkdir -p $d
  echo "=== bfly-bench-$build --types $t --K $k --M $ms --algorithms $algorithms --runs $runs" | tee -a $out/rows.log
  build-deps/bin/bfly-bench-$build --types $t --K $k --M $ms --algorithms $algorithms --runs $runs --out-dir $d \
    >> $out/rows.log 2>&1
  for f in $d/*.csv; do cat $f >> $out/rows.csv.tmp; done
done
awk 'NR==1 || !/^device,/' $out/rows.csv.tmp > $out/rows.csv; rm $out/rows.csv.tmp
python3 - "$out/rows.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["type"]]
print("type K algorithm M: median ms, fraction of the read ceiling")
for r in rows:
    print(f"{r['type']:5} {r['K']:>6} {r['algorithm']:16} {r['M']:>8}  {float(r['median_ms']):9.4f} ms  "
          f"{float(r['fraction_of_read_ceiling']):.3f}")
PY
