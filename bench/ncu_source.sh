#!/usr/bin/env bash
# Where a row kernel's warps wait, instruction by instruction: ncu's warp-state samples (SourceCounters) of one launch
# of bfly-bench's chosen row kernel, on the device (ncu needs the hardware counters):
#   bash bench/ncu_source.sh BENCH TYPE:K:M:ALGORITHM [...]
# e.g. bash bench/ncu_source.sh build-deps/bin/bfly-bench-overlap f32:4096:65536:bfly-auto f32:4096:4224:bfly-addsub-w16
# For each point: $OUT/ncu-source-TYPE-kK-mM.csv (the SASS of the kernel with each instruction's samples by stall
# reason: ncu --page source --print-source sass) and the sections' numbers appended to $OUT/ncu-source-details.txt.
# The kernel profiled is the first launch of a row kernel (bfly_sample_<type>... or bfly_sample_pairs_<type>...; not
# sample_split), with the clocks left alone (--clock-control none). `python3 bench/stall_phases.py --step` reads the CSVs.
# NCU_SECTIONS adds sections to the details (e.g. NCU_SECTIONS="MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Tables").
set -uo pipefail
bench=$1; shift
out=${OUT:-.}
export BFLY_CACHE_DIR=${BFLY_CACHE_DIR:-/tmp/bfly-cache}
work=$(mktemp -d)
for point in "$@"; do
  IFS=: read -r type K M algorithm <<< "$point"
  name=ncu-source-$type-k$K-m$M
  echo "=== $point" | tee -a "$out/ncu-source-details.txt"
  ncu --clock-control none -k "regex:^bfly_sample_(pairs_)?${type}_" -c 1 --import-source no \
      --section SourceCounters --section WarpStateStats --section SpeedOfLight --section Occupancy \
      $(for section in ${NCU_SECTIONS:-}; do echo --section "$section"; done) \
      -o "$work/$name" -f "$bench" --types "$type" --K "$K" --M "$M" --algorithms "$algorithm" --runs 1 --warmup 0 \
      > "$work/$name.log" 2>&1 || { tail -20 "$work/$name.log" | tee -a "$out/ncu-source-details.txt"; continue; }
  ncu -i "$work/$name.ncu-rep" --page details >> "$out/ncu-source-details.txt" 2>&1
  ncu -i "$work/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name.csv" 2> "$work/$name.err" ||
    { echo "--page source failed:"; cat "$work/$name.err"; } | tee -a "$out/ncu-source-details.txt"
done
rm -rf "$work"
