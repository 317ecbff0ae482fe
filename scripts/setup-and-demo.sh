#!/usr/bin/env bash
# A further command of the README's Quick start: installs the packages, builds bfly-gen and runs `bfly-gen demo`
# (on the GPU when there is one; otherwise the generated source runs on the CPU, about 20 s on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-packages.sh
source scripts/cuda-env.sh
cmake -S . -B build -G Ninja
cmake --build build --target bfly-gen
build/tools/bfly-gen/bfly-gen demo
