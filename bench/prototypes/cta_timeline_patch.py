#!/usr/bin/env python3
"""Adds a CTA timeline to one generated plain sample kernel, for bench/prototypes/cta_timeline.cu.

    bfly-gen show bfly_sample_f32_w16_k3900_r8_addsub --inline > k.cu
    python3 bench/prototypes/cta_timeline_patch.py k.cu k-timeline.cu

Thread 0 of each CTA writes the CTA's start and end (%globaltimer, ns) and its SM to bfly_timeline[3 * blockIdx.x ..];
the kernel's name is left in BFLY_KERNEL. A diagnostic of the nineteenth session (bench/NOTES.md, call 3): not built
by CMake, never part of a bfly kernel.
"""
import re
import sys

source = open(sys.argv[1]).read()
name = re.search(r'extern "C" __global__ void __launch_bounds__\([^)]*\)\n(\w+)\(', source).group(1)
kernel = 'extern "C" __global__'
source = source.replace(kernel, '__device__ unsigned long long* bfly_timeline;\n' + kernel, 1)
start = 'bfly::let_next_launch_start();'
if start not in source:
    sys.exit(f"{sys.argv[1]}: no '{start}' (not a plain sample kernel?)")
source = source.replace(
    start, start + '\n  unsigned long long bfly_t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(bfly_t0));', 1)
end = source.rstrip().rfind('}')  # the kernel's closing brace: the kernel is the source's last function
source = source[:end] + '''  __syncwarp();
  if (threadIdx.x == 0) {
    unsigned long long t1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    unsigned int sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    bfly_timeline[3 * blockIdx.x] = bfly_t0;
    bfly_timeline[3 * blockIdx.x + 1] = t1;
    bfly_timeline[3 * blockIdx.x + 2] = sm;
  }
}
#define BFLY_KERNEL ''' + name + '\n'
open(sys.argv[2], 'w').write(source)
