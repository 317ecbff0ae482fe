#!/usr/bin/env bash
# Builds and installs the Python package with `pip install .` into a virtual environment (build-python-venv/,
# git-ignored), then runs its pytest suite (python/tests). pip fetches the build requirements (scikit-build-core,
# nanobind) and the test requirements (numpy, scipy, pytest) from PyPI. Tests marked `gpu` skip themselves without
# a device. CI runs it after the C++ suites; on 2 cores the build takes a few minutes and the tests
# about a minute and a half (most of it compiling CPU kernels).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/cuda-env.sh
python="${PYTHON:-python3}"
venv=build-python-venv
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/python" -m pip install --quiet ".[test]"
# From outside the checkout, so that `import bfly` is the installed package.
cd "$venv"
bin/python -m pytest -q -ra ../python/tests
