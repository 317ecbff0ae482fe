#!/usr/bin/env bash
# Installs the Debian packages bfly needs to build and test (the CUDA 13 toolkit is assumed at /usr/local/cuda).
# Packages already installed (dpkg -s) are skipped, so a user without root gets through when they are all present.
# Otherwise it runs apt-get as root, through sudo when not root, and without either names the missing packages
# and exits with status 1.
set -euo pipefail

packages=(
  build-essential  # g++ (C++20), make
  cmake            # >= 3.25 (Debian 12 ships 3.25.1)
  ninja-build
  libfmt-dev       # used header-only
  libgtest-dev
  libgmock-dev
  python3-dev      # Python.h, for the Python package's compiled module (pip install ., scripts/test-python.sh)
  python3-venv     # the virtual environment scripts/test-python.sh installs the package into
)

missing=()
for package in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
  if [ "$status" != "install ok installed" ]; then missing+=("$package"); fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-packages: every package is installed (${packages[*]})"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-packages: error: these packages are missing: ${missing[*]}" >&2
    echo "install-packages: installing them needs root, and sudo is not available; as root, run:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  as_root=(sudo)
fi
echo "install-packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
