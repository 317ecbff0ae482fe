# The prototype behind staged pass 1 (docs/DESIGN.md section 14), kept as the record of how
# bench/results/h100-80gb-hbm3-2026-11-25-staged-prototype.log was made; bfly's kernels do not use it.
#
#   build-bench/tools/bfly-gen/bfly-gen show --K 1024 [--type f64] --inline > /tmp/proto_f32_k1024.cu
#   python3 bench/prototypes/staged_pass1.py K STAGES TYPE THREADS   # writes build-proto/proto_TYPE_kK_sSTAGES_tTHREADS.cu
#   nvcc -arch=sm_90 -O3 -std=c++17 -o proto build-proto/proto_f32_k1024_s4_t64.cu && ./proto   # on the GPU
#
# It copies the generated kernel, replaces its pass-1 loop (two blocks per step) by cp.async copies into shared
# memory STAGES steps ahead, and times both kernels and a float4 read of the same 1 GiB, comparing their draws.
import re, sys
K = int(sys.argv[1]); NST = int(sys.argv[2]); TY = sys.argv[3]; PT = int(sys.argv[4]); src = open(f'/tmp/proto_{TY}_k{K}.cu').read()
name = re.search(r'bfly_sample_\w+', src).group(0)
CT = 'float' if TY == 'f32' else 'double'
start = src.index('extern "C" __global__')
kernel = src[start:]
kernel = kernel[:kernel.index('\n}\n') + 3]
proto = kernel.replace(name + '(', f'proto_async{NST}(').replace('THREADS', 'PT_').replace('__launch_bounds__(128)', '__launch_bounds__(PT_)')
loop_start = proto.index('  for (int b = 0;')
loop_end = proto.index('}  // for each group of blocks') + len('}  // for each group of blocks')
loop = proto[loop_start:loop_end]
# the per-block work: lines after the two load_block lines
body = loop.split('\n')
work = [l for l in body[1:-1] if 'load_block' not in l and 'T a0[W], a1[W];' not in l]
NEW = f'''
  constexpr int NST = {NST};
  constexpr int SB = 2;                                   // blocks per stage: one 128-byte line of each row
  constexpr int ROWLEN = SB * W;
  constexpr int C16 = ROWLEN * (int)sizeof(T) / 16;       // 16-byte chunks per staged row
  constexpr int GROUPS = THREADS / W;
  extern __shared__ __align__(16) unsigned char stage_bytes[];
  auto& stage = *reinterpret_cast<T (*)[GROUPS][NST][W][ROWLEN]>(stage_bytes);
  const int g = static_cast<int>(threadIdx.x) / W;
  const int swz = sizeof(T) == 4 ? (g & 1) << 4 : 0;                           // odd groups: the other half of the banks
  auto issue = [&](int s, int b0) {{
    #pragma unroll
    for (int i = 0; i < C16; ++i) {{
      const int idx = i * W + r, k = idx / C16, c = idx % C16;
      const T* src = rows + (long long)k * ld + FIRST_BLOCK_COLUMN + b0 * W + c * (16 / (int)sizeof(T));
      const unsigned dst = (unsigned)__cvta_generic_to_shared(&stage[g][s][k][(c * (16 / (int)sizeof(T))) ^ swz]);
      const bool ok = k < rows_left;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n" :: "r"(dst), "l"(ok ? src : weights), "r"(ok ? 16 : 0));
    }}
  }};
  #pragma unroll
  for (int s = 0; s < NST; ++s) {{
    if (s * SB < BLOCKS) issue(s, s * SB);
    asm volatile("cp.async.commit_group;\\n");
  }}
  int s = 0;
  for (int b = 0; b < BLOCKS; b += SB) {{
    asm volatile("cp.async.wait_group %0;\\n" :: "n"(NST - 1));
    __syncwarp();
    T a0[W], a1[W];
    #pragma unroll
    for (int k = 0; k < W; ++k) {{ a0[k] = stage[g][s][k][r ^ swz]; a1[k] = stage[g][s][k][(W + r) ^ swz]; }}
    __syncwarp();
    if (b + NST * SB < BLOCKS) issue(s, b + NST * SB);
    asm volatile("cp.async.commit_group;\\n");
    s = s + 1 == NST ? 0 : s + 1;
''' + '\n'.join(work) + '\n  }\n'
proto = f'#define PT_ {PT}\n' + proto[:loop_start] + NEW + proto[loop_end:]
harness = r'''
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void fill(CT* w, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    w[i] = (x >> 8) * (1.0f / 16777216.0f) + 1e-6f;
  }
}
__global__ void read_ceiling(const float4* p, long long n4, float* sink) {
  float4 acc = make_float4(0, 0, 0, 0);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    float4 v = p[i]; acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
  }
  if (acc.x + acc.y + acc.z + acc.w == -1.f) sink[0] = acc.x;
}
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
  const long long K = KVAL, M = (1ll << 30) / (K * sizeof(CT)), n = M * K;
  CT* w; int *o1, *o2; float* sink; unsigned long long* inv;
  CK(cudaMalloc(&w, n * sizeof(CT))); CK(cudaMalloc(&o1, M * 4)); CK(cudaMalloc(&o2, M * 4)); CK(cudaMalloc(&sink, 4)); CK(cudaMalloc(&inv, 16));
  fill<<<4096, 256>>>(w, n, 12345u);
  CK(cudaMemset(o1, 0xff, M * 4)); CK(cudaMemset(o2, 0x7f, M * 4)); CK(cudaMemset(inv, 0, 16));
  const int grid = (int)((M + 127) / 128), pgrid = (int)((M + PT - 1) / PT);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, KNAME); int r1 = fa.numRegs, s1 = (int)fa.sharedSizeBytes;
  const int SMEM = PT * NST_ * 2 * 16 * sizeof(CT); cudaFuncSetAttribute(PNAME, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
  cudaFuncGetAttributes(&fa, PNAME); int r2 = fa.numRegs, s2 = (int)fa.sharedSizeBytes + SMEM;
  int occ1, occ2; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ1, KNAME, 128, 0); cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ2, PNAME, PT, SMEM);
  KNAME<<<grid, 128>>>(w, M, K, o1, inv, 777ull, 3u);
  PNAME<<<pgrid, PT, SMEM>>>(w, M, K, o2, inv, 777ull, 3u);
  CK(cudaDeviceSynchronize());
  std::vector<int> h1(M), h2(M); cudaMemcpy(h1.data(), o1, M * 4, cudaMemcpyDeviceToHost); cudaMemcpy(h2.data(), o2, M * 4, cudaMemcpyDeviceToHost);
  long long diff = 0, bad = 0; for (long long i = 0; i < M; ++i) { diff += h1[i] != h2[i]; bad += h1[i] < 0 || h1[i] >= K; }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t0, t1, t2;
  for (int it = 0; it < 18; ++it) {
    float ms;
    cudaEventRecord(a); read_ceiling<<<132 * 8, 512>>>((const float4*)w, n * sizeof(CT) / 16, sink); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) t0.push_back(ms);
    cudaEventRecord(a); KNAME<<<grid, 128>>>(w, M, K, o1, inv, 777ull, it); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) t1.push_back(ms);
    cudaEventRecord(a); PNAME<<<pgrid, PT, SMEM>>>(w, M, K, o2, inv, 777ull, it); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) t2.push_back(ms);
  }
  CK(cudaDeviceSynchronize());
  auto med = [](std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  double c = med(t0), k1 = med(t1), k2 = med(t2), gb = n * sizeof(CT) / 1e9;
  printf("TY K=%lld M=%lld PT=PTV NST=%d  ceiling %.1f GB/s | generated %.3f ms %.3f (regs %d smem %d ctas/SM %d) | async %.3f ms %.3f (regs %d smem %d ctas/SM %d) | draws differ %lld, out of range %lld\n",
         K, M, NST_, gb / c * 1e3, k1, c / k1, r1, s1, occ1, k2, c / k2, r2, s2, occ2, diff, bad);
  return diff != 0 || bad != 0;
}
'''
harness = harness.replace('CT', CT).replace('PTV', str(PT)).replace('PT', str(PT)).replace('TY', TY).replace('KVAL', str(K)).replace('KNAME', name).replace('PNAME', f'proto_async{NST}').replace('NST_', str(NST))
open(f'build-proto/proto_{TY}_k{K}_s{NST}_t{PT}.cu', 'w').write(src + '\n' + proto + '\n' + harness)
