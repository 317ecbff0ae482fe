#!/usr/bin/env bash
# The one command for the GPU machine, from the repository root (carry "build-deps", and ".whl" for tomotopy):
#   bash bench/lda/run_lda_on_device.sh            # --quick: K in {16, 64, 256, 1024}, f32 and f64 (< 6 min, H100)
#   bash bench/lda/run_lda_on_device.sh --full     # Figure 11's sweep K = 4, 8, ..., 1024 (default spec + w32-addsub)
# Steps, each logged to $OUT/lda-bench.log:
#   1. configure bfly with the bench into build-device/ (fmt from build-deps/fmt: bench/prepare_device_deps.sh)
#      and build lda-bench and bfly-lda on all cores;
#   2. if build-deps/bin/bfly_gpu_tests exists (built on the build machine, copied there), run its LDA GPU tests;
#   3. write the paper-shaped corpus (scripts/lda/make_paper_corpus.py, seeded) and run lda-bench on it;
#   4. bench/lda/torch_zstep.py on the same corpus (appends to the CSV), then bench/lda/plot_lda.py;
#   5. if .whl holds tomotopy and build-deps/corpora/wordnet-glosses.txt exists: bfly-lda --save-corpus, then
#      bench/lda/tomotopy_compare.py (bfly-lda on the GPU vs tomotopy on the CPUs, log-likelihood vs seconds).
# Outputs in $OUT (default bench/results): lda-bench.log, <device>-<date>-lda.csv/.png,
# <device>-<date>-lda-vs-tomotopy.csv/.png, gpu-tests.log. Environment: TOMOTOPY_SECONDS (default 40),
# SKIP_TORCH=1, SKIP_TOMOTOPY=1, SKIP_TESTS=1, LDA_BENCH_ARGS (extra lda-bench flags), TORCH_ARGS (extra
# torch_zstep.py flags, e.g. --types f32).
set -uo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench/lda" ]] || { echo "run from the repository root" >&2; exit 2; }
OUT=${OUT:-$root/bench/results}
mkdir -p "$OUT"
build=$root/build-device
jobs=$(nproc)
mode=(--quick)
[[ "${1:-}" == "--full" ]] && mode=()
status=0
step() { echo; echo "=== $(date +%T) [${SECONDS}s] $*"; }

main() {
step "machine"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 || true

step "configure"
cmake_args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBFLY_BUILD_BENCH=ON -DBFLY_BUILD_TESTS=OFF)
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
[[ -f "$root/build-deps/fmt/lib/cmake/fmt/fmt-config.cmake" ]] && cmake_args+=("-Dfmt_DIR=$root/build-deps/fmt/lib/cmake/fmt")
cmake "${cmake_args[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "configure failed"; return 3; }

step "build lda-bench and bfly-lda ($jobs jobs)"
cmake --build "$build" --target lda-bench bfly-lda -j "$jobs" 2>&1 | grep -E "error|warning: .*spill|FAILED" 
[[ -x "$build/bench/lda/lda-bench" && -x "$build/tools/bfly-lda/bfly-lda" ]] || { echo "build failed"; return 4; }
export BFLY_CACHE_DIR=$build/bfly-cache

if [[ "${SKIP_TESTS:-0}" != 1 && -x "$root/build-deps/bin/bfly_gpu_tests" ]]; then
  step "GPU tests of the LDA iteration (build-deps/bin/bfly_gpu_tests)"
  "$root/build-deps/bin/bfly_gpu_tests" --gtest_filter='GpuLda*' > "$OUT/gpu-tests.log" 2>&1
  tests=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|GPU recovery|Failure|error" "$OUT/gpu-tests.log" | head -60
  [[ $tests -ne 0 ]] && { echo "GPU tests failed ($tests)"; status=7; }
fi

step "paper-shaped corpus"
corpus=$build/corpora/paper
[[ -f $corpus/docword.paper.txt ]] || python3 "$root/scripts/lda/make_paper_corpus.py" --out "$corpus" || return 5

step "lda-bench ${mode[*]} ${LDA_BENCH_ARGS:-}"
"$build/bench/lda/lda-bench" --docword "$corpus/docword.paper.txt" --vocab "$corpus/vocab.paper.txt" \
  --out-dir "$OUT" "${mode[@]}" ${LDA_BENCH_ARGS:-}
bench_status=$?
[[ $bench_status -ne 0 ]] && { echo "lda-bench exit status $bench_status"; status=$bench_status; }
csv=$(ls -t "$OUT"/*-lda.csv 2>/dev/null | head -1)

if [[ "${SKIP_TORCH:-0}" != 1 && -n "$csv" ]]; then
  step "torch z-step"
  PYTHONUNBUFFERED=1 python3 "$root/bench/lda/torch_zstep.py" --docword "$corpus/docword.paper.txt" --csv "$csv" \
    "${mode[@]}" ${TORCH_ARGS:-} || { echo "torch_zstep.py failed"; [[ $status -eq 0 ]] && status=8; }
fi
if [[ -n "$csv" ]]; then
  step "plot"
  python3 "$root/bench/lda/plot_lda.py" "$csv" || echo "plot_lda.py failed"
fi

glosses=$root/build-deps/corpora/wordnet-glosses.txt
if [[ "${SKIP_TOMOTOPY:-0}" != 1 && -f $glosses ]] && ls "$root"/.whl/tomotopy-*.whl >/dev/null 2>&1; then
  step "tomotopy comparison on the WordNet glosses"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$root"/.whl/tomotopy-*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  "$build/tools/bfly-lda/bfly-lda" --text "$glosses" --save-corpus "$build/corpora/wordnet" | tail -1
  PYTHONUNBUFFERED=1 python3 "$root/bench/lda/tomotopy_compare.py" --docword "$build/corpora/wordnet/docword.txt" \
    --vocab "$build/corpora/wordnet/vocab.txt" --bfly-lda "$build/tools/bfly-lda/bfly-lda" --topics 64 \
    --seconds "${TOMOTOPY_SECONDS:-40}" --out-dir "$OUT" || echo "tomotopy_compare.py failed"
fi

step "done, exit status $status"
ls -l "$OUT"
return $status
}

main "$@" 2>&1 | tee -a "$OUT/lda-bench.log"
exit "${PIPESTATUS[0]}"
