#!/usr/bin/env bash
# Builds and installs the Python package with `pip install .` into a virtual environment (build-python-venv/,
# git-ignored), then runs its pytest suite (python/tests). pip fetches the build requirements (scikit-build-core,
# nanobind) and the test requirements (numpy, scipy, pytest, pytest-xdist) from PyPI. Tests marked `gpu` skip
# themselves without a device. CI runs it after the C++ suites; on 2 cores the build takes about two minutes and the
# tests, one process a core (pytest-xdist; each has its own kernel cache, python/tests/conftest.py), under a minute
# (most of it compiling CPU kernels; 77 s in one process).
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
bin/python -m pytest -q -ra -n "$(nproc)" ../python/tests
