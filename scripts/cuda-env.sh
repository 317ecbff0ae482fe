# Sourced by the scripts: checks for the CUDA toolkit and puts nvcc on PATH for CMake's FindCUDAToolkit.
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  echo "error: the CUDA 13 toolkit was not found at $cuda_home (set CUDA_HOME to where it is installed)" >&2
  exit 1
fi
export PATH="$cuda_home/bin:$PATH"
