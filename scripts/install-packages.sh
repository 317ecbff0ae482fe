#!/usr/bin/env bash
# Installs the Debian packages bfly needs to build and test (the CUDA 13 toolkit is assumed at /usr/local/cuda).
# Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail

packages=(
  build-essential  # g++ (C++20), make
  cmake            # >= 3.25 (Debian 12 ships 3.25.1)
  ninja-build
  libfmt-dev       # used header-only
  libgtest-dev
  libgmock-dev
)

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
