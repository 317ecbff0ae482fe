#!/usr/bin/env bash
# CI's sanitizer job: builds the CPU test suites and bfly-lda with AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan/, runs them and a short bfly-lda run. The suites: bfly_generator_tests (the generator, golden files,
# bfly/lockstep.hpp's fibers, shuffles and stops, the launch contract, kernel families and argument packing) and
# bfly_lda_tests (corpus readers, CPU reference, the generated z-step kernels on the CPU through
# bfly/lockstep.hpp, checkpoints, outputs, the command line). The draw-for-draw catalog, the NVRTC and nvcc suites
# and the GPU suites are left to the main job (their code paths are the same; compiling the catalog again with the
# sanitizers would double CI's time).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/cuda-env.sh
jobs="$(nproc)"
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# The binaries must start without a driver: checked below with ldd (jit/ links NVRTC without the driver stub).
# -O1 with line tables (the build type Sanitize): the sanitizers' usual level, and about two thirds of the compile time
# of RelWithDebInfo's -O2 -g (data_parallel.cpp: 27 s against 43 s on one core), which set CI's length; the libraries
# as unity files (the tests are not: tests/CMakeLists.txt), 251 s against 499 s for these targets on 2 cores.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_UNITY_BUILD=ON \
  -DBFLY_LDA_CPU_KERNELS="64:f32;64:f32:short"
cmake --build build-asan --parallel "$jobs" --target bfly-lda bfly_lda_tests bfly_generator_tests
if ldd build-asan/tools/bfly-lda/bfly-lda | grep -q libcuda; then
  echo "sanitize-and-test: bfly-lda needs libcuda.so.1; it must start without a driver" >&2
  exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/tests/bfly_generator_tests
build-asan/tests/lda/bfly_lda_tests
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
awk 'BEGIN { srand(3); for (d = 0; d < 300; d++) { line = ""; n = 5 + int(rand() * 20);
  for (i = 0; i < n; i++) line = line " word" sprintf("%c%c", 97 + int(rand() * 8), 97 + int(rand() * 8));
  print line } }' > "$out/corpus.txt"
build-asan/tools/bfly-lda/bfly-lda --text "$out/corpus.txt" --min-count 1 \
  --topics 64 --iterations 3 --device cpu --out "$out/run" --quiet 2>&1 | tail -5 || {
  echo "sanitize-and-test: the bfly-lda run failed" >&2
  exit 1
}
echo "sanitize-and-test: passed"
