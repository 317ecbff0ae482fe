#!/usr/bin/env bash
# The README's second command: builds everything and runs the test suites with CTest. Tests labelled `gpu` skip
# themselves when there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/cuda-env.sh
jobs="$(nproc)"
cmake -S . -B build -G Ninja
cmake --build build --parallel "$jobs"
ctest --test-dir build --output-on-failure --parallel "$jobs"
