#!/usr/bin/env bash
# Checks bfly as a package, reusing the build in build/ (scripts/build-and-test.sh):
#   1. cmake --install build into a temporary prefix;
#   2. configures and builds examples/ against that prefix alone (find_package(bfly), bfly_add_kernels), runs the
#      JIT example (without a GPU it says why and exits 0) and, with a GPU, the ahead-of-time one;
#   3. checks that bfly_add_kernels regenerates a header when its spec changes and not otherwise;
#   4. builds examples/ from bfly's source (the FetchContent / add_subdirectory route, -DBFLY_EXAMPLES_FROM_SOURCE).
# Usage: scripts/check-package.sh [WORK_DIR]   (default: a temporary directory, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cuda-env.sh
root="$PWD"
jobs="$(nproc)"

if [ $# -ge 1 ]; then
  work="$1"
  rm -rf "$work"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
prefix="$work/prefix"
step() { echo; echo "=== check-package: $*"; }

step "install into $prefix"
cmake --build build --parallel "$jobs" --target bfly-gen bfly-lda
cmake --install build --prefix "$prefix" > "$work/install.log"
for file in bin/bfly-gen bin/bfly-lda lib/cmake/bfly/bflyConfig.cmake lib/cmake/bfly/bflyConfigVersion.cmake \
            lib/cmake/bfly/bflyKernels.cmake include/bfly/ops/sampler.hpp include/bfly/philox.cuh \
            include/bfly/lockstep.hpp; do
  [ -e "$prefix/$file" ] || { echo "check-package: $file was not installed" >&2; exit 1; }
done
"$prefix/bin/bfly-gen" --version
"$prefix/bin/bfly-lda" --version

step "examples/ against the installed prefix only"
examples="$work/examples"
cmake -S examples -B "$examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
grep -q "^bfly_DIR:PATH=$prefix/lib/cmake/bfly\$" "$examples/CMakeCache.txt" ||
  { echo "check-package: find_package(bfly) did not take the installed prefix" >&2; exit 1; }
cmake --build "$examples" --parallel "$jobs"
"$examples/jit_sample"
if [ -x "$examples/aot_sample" ]; then "$examples/aot_sample"; fi

step "bfly_add_kernels regenerates on a spec change only"
header="$examples/bfly_kernels/sampler_k1000.cuh"
grep -q "^// SPDX-License-Identifier: MIT" "$header"
grep -q "bfly_sample_f32_w16_k1000_r8_addsub_launch" "$header"
# Nothing to do in a second build.
if ! ninja -C "$examples" -n | grep -q "ninja: no work to do"; then
  ninja -C "$examples" -n -d explain >&2 || true
  echo "check-package: a second build of examples/ would run commands" >&2
  exit 1
fi
# Another spec (W=8): the header is regenerated and aot_sample rebuilt.
cmake "$examples" -DBFLY_EXAMPLES_SPEC="name=sampler_k1000,K=1000,type=f32,W=8" > /dev/null
ninja -C "$examples" -n | tee "$work/plan.txt"
grep -q "bfly-gen: sampler_k1000.cuh" "$work/plan.txt" ||
  { echo "check-package: a changed spec did not regenerate the header" >&2; exit 1; }
cmake --build "$examples"
grep -q "bfly_sample_f32_w8_k1000_r7_addsub_launch" "$header" ||
  { echo "check-package: the header does not hold the W=8 kernel" >&2; exit 1; }
ninja -C "$examples" -n | grep -q "ninja: no work to do" ||
  { echo "check-package: the build after the spec change is not up to date" >&2; exit 1; }

step "examples/ with bfly from source (FetchContent / add_subdirectory)"
from_source="$work/examples-from-source"
# bfly's libraries and tools as unity files, as the Python package and the sanitizer build take them (the tests are
# not part of this build): the same sources in about half the compile time on 2 cores.
cmake -S examples -B "$from_source" -G Ninja -DBFLY_EXAMPLES_FROM_SOURCE=ON -DBFLY_EXAMPLES_SOURCE="$root" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON
cmake --build "$from_source" --parallel "$jobs"
"$from_source/jit_sample"
if [ -x "$from_source/aot_sample" ]; then "$from_source/aot_sample"; fi

step "passed"
