#!/usr/bin/env bash
# The one command for the GPU machine, from the repository root:
#   bash bench/run_on_device.sh [extra bfly-bench flags, e.g. --K 64,1024 --runs 20]
# Configures bfly with the bench into build-device/ (fmt from build-deps/fmt when present: see
# bench/prepare_device_deps.sh), builds bfly-bench on all cores, runs bfly-bench, then bench/peers/peers.py,
# then bench/plot.py. Everything goes to $OUT (default bench/results): bench.log, <device>-<date>-sampling.csv,
# <device>-<date>-peers.csv and <device>-<date>-sampling-<type>.png.
# Environment: BFLY_BUILD_TESTS=ON also builds the tests (default OFF); PEERS_ARGS adds peers.py flags;
# SKIP_PEERS=1 skips peers.py; LLM_PEERS=1 also runs bench/peers/llm_peers.py (PyTorch's samplers at the LLM
# shapes of `bfly-bench --llm`; LLM_PEERS_ARGS adds its flags). The K-range sweeps: pass --k-range (K = 2 .. 262144
# at a GiB of weights) or --llm (K = 32000, 128256, 262144 at M = 1 .. 256) through to bfly-bench.
# Exit status: bfly-bench's (1 = a draw check failed), else the first failing step's.
set -uo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench" ]] || { echo "run from the repository root" >&2; exit 2; }
OUT=${OUT:-$root/bench/results}
mkdir -p "$OUT"
build=$root/build-device
jobs=$(nproc)
status=0
step() { echo; echo "=== $(date +%T) [${SECONDS}s] $*"; }

main() {
step "machine"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 || true
nvcc --version | tail -1
cmake --version | head -1

step "configure"
cmake_args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBFLY_BUILD_BENCH=ON
            "-DBFLY_BUILD_TESTS=${BFLY_BUILD_TESTS:-OFF}")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
[[ -f "$root/build-deps/fmt/lib/cmake/fmt/fmt-config.cmake" ]] && cmake_args+=("-Dfmt_DIR=$root/build-deps/fmt/lib/cmake/fmt")
cmake "${cmake_args[@]}" || { echo "configure failed"; return 3; }

step "build bfly-bench ($jobs jobs)"
cmake --build "$build" --target bfly-bench -j "$jobs" || { echo "build failed"; return 4; }

step "bfly-bench"
export BFLY_CACHE_DIR=$build/bfly-cache  # compiled kernels stay in the build folder
"$build/bench/bfly-bench" --out-dir "$OUT" --jobs "$jobs" "$@"
status=$?
echo "bfly-bench exit status $status"
sampling_csv=$(ls -t "$OUT"/*-sampling.csv 2>/dev/null | head -1)

if [[ "${SKIP_PEERS:-0}" != 1 ]]; then
  step "peers"
  PYTHONUNBUFFERED=1 python3 "$root/bench/peers/peers.py" ${sampling_csv:+--read-ceiling-csv "$sampling_csv"} \
    --out-dir "$OUT" ${PEERS_ARGS:-}
  peers_status=$?
  [[ $peers_status -ne 0 ]] && { echo "peers.py exit status $peers_status"; [[ $status -eq 0 ]] && status=5; }
fi

if [[ "${LLM_PEERS:-0}" == 1 ]]; then
  step "llm peers"
  PYTHONUNBUFFERED=1 python3 "$root/bench/peers/llm_peers.py" ${sampling_csv:+--read-ceiling-csv "$sampling_csv"} \
    --out-dir "$OUT" ${LLM_PEERS_ARGS:-}
  llm_status=$?
  [[ $llm_status -ne 0 ]] && { echo "llm_peers.py exit status $llm_status"; [[ $status -eq 0 ]] && status=5; }
fi

if [[ -n "$sampling_csv" ]]; then
  step "plot"
  peers_csv=$(ls -t "$OUT"/*-peers.csv 2>/dev/null | head -1)
  python3 "$root/bench/plot.py" "$sampling_csv" ${peers_csv:+--peers "$peers_csv"} --out-dir "$OUT" \
    || { echo "plot.py failed"; [[ $status -eq 0 ]] && status=6; }
fi

step "done, exit status $status"
ls -l "$OUT"
return $status
}

main "$@" 2>&1 | tee -a "$OUT/bench.log"
exit "${PIPESTATUS[0]}"
