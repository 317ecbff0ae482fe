# The row-alignment runs of staged pass 1 (docs/DESIGN.md section 14): each generated kernel timed at ld = K and at
# ld rounded up to a whole number of 128-byte lines, the same rows and bytes, beside a float4 read of the same bytes
# (bench/results/h100-80gb-hbm3-2026-11-25-staged-{blocks,lines,final}-alignment.log). From the repository root:
#
#   mkdir -p build-proto2 && cp bench/prototypes/row_alignment.inc build-proto2/harness.inc
#   for K in 1000 2000 3000 1024; do build-bench/tools/bfly-gen/bfly-gen show --K $K --inline > build-proto2/k$K.cu; done
#   for K in 1000 3000; do build-bench/tools/bfly-gen/bfly-gen show --K $K --type bf16 --inline > build-proto2/bf16k$K.cu; done
#   build-bench/tools/bfly-gen/bfly-gen show --K 1000 --type f64 --inline > build-proto2/f64k1000.cu
#   python3 bench/prototypes/row_alignment.py && for f in build-proto2/t_*.cu; do nvcc -arch=sm_90 -O3 -std=c++17 -w -o ${f%.cu} $f; done
#   for t in build-proto2/t_*; do [ -x $t ] && $t; done   # on the GPU
import re

CASES = [('k1000.cu', 'float', 32), ('k2000.cu', 'float', 32), ('k3000.cu', 'float', 32), ('k1024.cu', 'float', 32),
         ('f64k1000.cu', 'double', 16), ('bf16k1000.cu', 'bfly::bf16_bits', 64), ('bf16k3000.cu', 'bfly::bf16_bits', 64)]
BF16_FILL = '''template <> __global__ void fill<bfly::bf16_bits>(bfly::bf16_bits* w, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 15; x *= 2246822519u; x ^= x >> 13;
    float v = (x >> 8) * (1.0f / 16777216.0f) + 1e-3f; w[i].bits = (unsigned short)(__float_as_uint(v) >> 16); } }
'''
for source, element, line_elements in CASES:
    text = open(f'build-proto2/{source}').read()
    name = re.search(r'^// (bfly_\w+)', text, re.M).group(1)
    K = int(re.search(r'_k(\d+)_', name).group(1))
    threads = int(re.search(r'constexpr int THREADS = (\d+)', text).group(1))
    extra = BF16_FILL if 'bf16' in element else ''
    with open(f'build-proto2/t_{source}', 'w') as out:
        out.write(f'#include "{source}"\n#include "harness.inc"\n{extra}'
                  f'int main() {{ run<{element}>("{name}", {name}, {K}, {line_elements}, {threads}); }}\n')
