// Prototype, not part of the library: the plain sample kernel's rows on lines (f32, staged pass 1) with P warps a
// CTA, each warp one part of the same 32 rows, so that a CTA lives K / P long.
//
// The question it answers (bench/NOTES.md, eighth session): bfly-auto's fraction of the read ceiling at a K grows
// with the bytes a launch reads (H200, f32 K = 4096: 0.863 at 1 GiB, 0.906 at 2, 0.938 at 4), as if each launch paid
// a cost of about half a CTA's life (the ragged end of a launch whose CTAs started at scattered times). Does a CTA
// that lives half as long (P = 2) or a quarter (P = 4) read closer to the ceiling at 1 GiB?
//
// Part p of a CTA stages and sums blocks p BLOCKS / P .. (p + 1) BLOCKS / P - 1 of the 32 rows in its own ring of PS
// lines a row (STAGES / P, so that the CTA's shared memory stays the generated kernel's), its running totals from 0 at
// the part's first block. After a barrier warp 0 adds each part's offset (the totals of the parts before it) to the
// part's chunk totals and draws as the generated kernel does (pass 2 unchanged); the other warps leave. Sums are the
// generated kernel's up to the order of the additions, so a draw can differ where u' falls within rounding of a
// chunk's end: the check counts them.
//
// Variants that leave a stage out place the time by differences (no pass 2, no screen, only the copies), one launch
// at 1 GiB writes each CTA's start and end (how many CTAs run over time: the timeline, a prototype of call 3), and
// pass 2 reads its chunk's blocks one after another as the generated kernel did, loaded together with the chosen one
// reloaded (batched), or loaded together and kept (spliced: the chosen tile put together from them), which the
// generator took up (gen::pass2_keeps_chunk). Results: bench/results/h200-2026-11-28-s8c2-row-parts.txt,
// -s8c3-row-parts-leave.txt, -s8c4-row-parts-pass2.txt, and (row_groups: G groups of 32 rows a CTA in turn, the next
// group's first lines staged before a group's pass 2) -s8c9-row-groups.txt. Each call ran the variants of its day;
// this file is call 9's, whose main() no longer runs the parts of P = 2 and 4 nor the timeline.
//
// Build here (K = 1024, 2048, 3072 or 4096; f32 on lines), run on the GPU:
//   build/tools/bfly-gen/bfly-gen show --K 4096 --type f32 --inline > /tmp/k4096.cu
//   nvcc -O3 -std=c++17 -arch=sm_90 -Itemplates -DGENERATED='"/tmp/k4096.cu"' \
//     -DGEN_NS=bfly_sample_f32_w16_k4096_r8_addsub_detail -DGEN_KERNEL=bfly_sample_f32_w16_k4096_r8_addsub \
//     bench/prototypes/row_parts.cu -o row_parts_k4096
//   ./row_parts_k4096 [runs]          (or [runs] tail: the generated kernel and row_parts<P> over the last rows)
#include GENERATED

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace proto {
using namespace GEN_NS;
static_assert(REMNANT == 0 && FIRST_BLOCK_COLUMN == 0 && THREADS == 32, "rows of whole blocks, one warp a CTA");

template <int RC>
__device__ __forceinline__ void stage_line_p(Column (&ring)[W][RC], const StagePlan& plan, int line, int r,
                                             int swizzle) {
#pragma unroll
  for (int i = 0; i < PIECES_PER_LANE; ++i) {
    const int k = (i * W + r) / LINE_PIECES;
    const int c = line * LINE_COLUMNS + plan.column[i];
    const bool in_row = c >= 0 && c < BLOCKS * W;
    bfly::copy_16_bytes(&ring[k][(c & (RC - 1)) ^ swizzle], plan.source[i] + line * LINE_COLUMNS, in_row);
  }
}

template <int RC>
__device__ __forceinline__ void load_staged_block_p(T (&a)[W], const Column (&ring)[W][RC], int column, int r,
                                                    int swizzle) {
  const int place = (column & (RC - 1)) ^ swizzle;
#pragma unroll
  for (int s = 0; s < W; ++s) a[s] = ring[(((s & 3) ^ (r & 3)) + (s & ~3))][place];
}

// What a variant leaves out, to place time by differences: kAll draws; kNoPass2 writes the row's total's bits instead
// of a draw (no pass 2); kNoScreen skips the screen of pass 1; kCopiesOnly stages the lines and reads one word a step.
enum Leave { kAll, kNoPass2, kNoScreen, kCopiesOnly };
// How pass 2 reads the chunk's blocks: kReload as the generated kernel (one block after another, then the chosen one
// again), kBatched (the chunk's blocks loaded together, the chosen one again), kSpliced (loaded together and kept: the
// chosen block's tile is put together from them, row k from lane k's choice, without a load).
enum Pass2 { kReload, kBatched, kSpliced };
__device__ unsigned int* cta_times = nullptr;  // when set: each CTA's start, end (%globaltimer) and SM

__device__ __forceinline__ unsigned int global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return static_cast<unsigned int>(t);
}
__device__ __forceinline__ unsigned int sm_id() {
  unsigned int s;
  asm volatile("mov.u32 %0, %smid;" : "=r"(s));
  return s;
}

template <int P, int PS, Leave LEAVE = kAll, Pass2 PASS2 = kReload>
__global__ void __launch_bounds__(32 * P, 5)
row_parts(const T* __restrict__ weights, long long M, long long ld, int* __restrict__ out,
          unsigned long long* __restrict__ invalid_rows, unsigned long long seed, unsigned int iteration,
          int first_cta = 0) {
  const unsigned int start_time = cta_times != nullptr ? global_timer() : 0u;
  // The last rows of a launch (main's "tail" mode): CTA b draws rows (first_cta + b) * 32 .. and, launched to overlap
  // the generated kernel over the rows before, its last CTA waits for that launch, as sample_split's does.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (first_cta > 0 && blockIdx.x == gridDim.x - 1) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  constexpr int RC = PS * LINE_COLUMNS;
  constexpr int PART_BLOCKS = BLOCKS / P;
  constexpr int PART_STEPS = PART_BLOCKS / BLOCKS_IN_FLIGHT;
  constexpr int PART_CHUNKS = PART_BLOCKS / CHUNK_BLOCKS;
  static_assert(BLOCKS % (P * CHUNK_BLOCKS) == 0 && PART_BLOCKS % BLOCKS_IN_FLIGHT == 0, "parts of whole chunks");
  static_assert(CHUNKS == BLOCKS / CHUNK_BLOCKS, "chunks of whole blocks");
  const int part = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r = lane & (W - 1);
  const long long m = static_cast<long long>(blockIdx.x + first_cta) * 32 + lane;
  const long long group_first_row = m - r;
  const int rows_left = M - group_first_row < W ? static_cast<int>(M - group_first_row) : W;
  const T* const rows = weights + group_first_row * ld;
  const T* const my_row = weights + m * ld;
  __shared__ T running_total[CHUNKS][32];
  __shared__ unsigned int screens[P][32];
  __shared__ __align__(16) Column ring[P][32 / W][W][RC];

  const int group = lane / W;
  Column(&my_ring)[W][RC] = ring[part][group];
  const int swizzle = group % (32 / W) * W;
  const StagePlan plan = plan_stages(rows, ld, rows_left, r);
  const int first_step = part * PART_STEPS;
  unsigned int screen = 0u;
  T running = T(0);
#pragma unroll
  for (int i = 0; i < PS; ++i) {
    stage_line_p(my_ring, plan, first_step + i, r, swizzle);
    bfly::commit_copies();
  }
  for (int s = 0; s < PART_STEPS; ++s) {
    const int step = first_step + s;
    bfly::wait_copies<PS - 1>();
    __syncwarp();
    T a[BLOCKS_IN_FLIGHT][W];
#pragma unroll
    for (int j = 0; j < BLOCKS_IN_FLIGHT; ++j) {
      if (LEAVE == kCopiesOnly) {
        for (int i = 0; i < W; ++i) a[j][i] = T(0);
        a[j][0] = my_ring[r][((step * LINE_COLUMNS + j * W + r) & (RC - 1)) ^ swizzle];
      } else {
        load_staged_block_p(a[j], my_ring, step * LINE_COLUMNS + j * W + r, r, swizzle);
      }
    }
    __syncwarp();
    if (s + PS < PART_STEPS) stage_line_p(my_ring, plan, step + PS, r, swizzle);
    bfly::commit_copies();
#pragma unroll
    for (int j = 0; j < BLOCKS_IN_FLIGHT; ++j) {
      const int b = step * BLOCKS_IN_FLIGHT + j;
      if (LEAVE == kCopiesOnly) {
        running += a[j][0];
      } else {
        if (LEAVE != kNoScreen) screen_block(a[j], screen);
        running += block_total(a[j], r);
      }
      if ((b + 1) % CHUNK_BLOCKS == 0) running_total[b / CHUNK_BLOCKS][lane] = running;
    }
  }
  screens[part][lane] = screen;
  __syncthreads();
  if (part != 0) return;
  // Each part's chunk totals start from 0 at its first block: add the totals of the parts before it.
  T offset = running_total[PART_CHUNKS - 1][lane];
#pragma unroll
  for (int p = 1; p < P; ++p) {
    for (int c = 0; c < PART_CHUNKS; ++c) running_total[p * PART_CHUNKS + c][lane] += offset;
    offset = running_total[(p + 1) * PART_CHUNKS - 1][lane];
    screen = max(screen, screens[p][lane]);
  }

  if (LEAVE == kNoPass2 || LEAVE == kCopiesOnly) {
    if (m < M) out[m] = static_cast<int>(__float_as_uint(static_cast<float>(running_total[CHUNKS - 1][lane])) & 0xfff);
    if (cta_times != nullptr && lane == 0) {
      cta_times[3 * blockIdx.x] = start_time; cta_times[3 * blockIdx.x + 1] = global_timer();
      cta_times[3 * blockIdx.x + 2] = sm_id();
    }
    return;
  }
  // Pass 2 as the generated kernel's.
  const bool bad_row =
      bfly::group_any(!bfly::screen_passed(screen, T()), W) && m < M && bfly::row_has_unusable_weight(my_row, K);
  const T total = running_total[CHUNKS - 1][lane];
  const bool valid = m < M && !bad_row && bfly::valid_total(total);
  const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, iteration), T());
  const T target = valid ? bfly::scaled_uniform(u, total) : T(0);
  int draw = 0;
  int chunk = 0;
  {
    int hi = CHUNKS - 1;
    while (chunk < hi) {
      const int mid = (chunk + hi) >> 1;
      if (target < running_total[mid][lane]) hi = mid; else chunk = mid + 1;
    }
  }
  T low = chunk > 0 ? running_total[chunk - 1][lane] : T(0);
  T high = low;
  int block = chunk * CHUNK_BLOCKS;
  bool found = false;
  T run = low;
  if (PASS2 != kReload) {
    T raw[CHUNK_BLOCKS][W];
#pragma unroll
    for (int t = 0; t < CHUNK_BLOCKS; ++t) load_chosen_blocks(raw[t], rows, ld, rows_left, chunk * CHUNK_BLOCKS + t, r);
    int found_t = 0;
#pragma unroll
    for (int t = 0; t < CHUNK_BLOCKS; ++t) {
      T a[W];
#pragma unroll
      for (int i = 0; i < W; ++i) a[i] = raw[t][i];
      build_table(a, r);
      const T next = run + a[W - 1];
      if (!found && target < next) { found = true; found_t = t; low = run; high = next; }
      run = next;
    }
    block = chunk * CHUNK_BLOCKS + found_t;
    T a[W];
    if (PASS2 == kSpliced) {
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const int tk = __shfl_sync(FULL, found_t, k, W);
        T v = raw[0][k];
#pragma unroll
        for (int t = 1; t < CHUNK_BLOCKS; ++t) v = tk == t ? raw[t][k] : v;
        a[k] = v;
      }
    } else {
      load_chosen_blocks(a, rows, ld, rows_left, block, r);
    }
    build_table(a, r);
    draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);
  } else {
  for (int t = 0; t < CHUNK_BLOCKS; ++t) {
    T a[W];
    load_chosen_blocks(a, rows, ld, rows_left, chunk * CHUNK_BLOCKS + t, r);
    build_table(a, r);
    const T next = run + a[W - 1];
    if (!found && target < next) { found = true; block = chunk * CHUNK_BLOCKS + t; low = run; high = next; }
    run = next;
  }
  {
    T a[W];
    load_chosen_blocks(a, rows, ld, rows_left, block, r);
    build_table(a, r);
    draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);
  }
  }
  const bool again = valid && (draw < 0 || !(my_row[draw] > T(0)));
  draw = bfly::sequential_draw_by_warp(again, my_row, K, u, draw);
  if (valid) {
    out[m] = draw;
  } else if (m < M) {
    out[m] = -1;
    bfly::report_invalid_row(invalid_rows, m);
  }
  if (cta_times != nullptr && lane == 0) {
    cta_times[3 * blockIdx.x] = start_time; cta_times[3 * blockIdx.x + 1] = global_timer();
    cta_times[3 * blockIdx.x + 2] = sm_id();
  }
}

// G groups of 32 rows a CTA (one warp), in turn: before pass 2 of a group the warp stages the next group's first
// lines into the ring (all read by then), so that pass 2's wait on memory overlaps the next rows' copies. Pass 2 as
// kSpliced. The same sums as the generated kernel: the same draws.
template <int G>
__global__ void __launch_bounds__(32, 5)
row_groups(const T* __restrict__ weights, long long M, long long ld, int* __restrict__ out,
           unsigned long long* __restrict__ invalid_rows, unsigned long long seed, unsigned int iteration) {
  constexpr int PS = 8;
  constexpr int RC = PS * LINE_COLUMNS;
  constexpr int STEPS = BLOCKS / BLOCKS_IN_FLIGHT;
  static_assert(BLOCKS % BLOCKS_IN_FLIGHT == 0 && CHUNKS == BLOCKS / CHUNK_BLOCKS, "whole steps and chunks");
  const int lane = static_cast<int>(threadIdx.x);
  const int r = lane & (W - 1);
  const int group = lane / W;
  const int swizzle = group % (32 / W) * W;
  __shared__ T running_total[CHUNKS][32];
  __shared__ __align__(16) Column ring[32 / W][W][RC];
  Column(&my_ring)[W][RC] = ring[group];
  const long long base = static_cast<long long>(blockIdx.x) * 32 * G;
  const auto rows_left_of = [&](long long first) { return M - first < W ? static_cast<int>(M - first) : W; };
  long long group_first_row = base + lane - r;
  StagePlan plan = plan_stages(weights + group_first_row * ld, ld, rows_left_of(group_first_row), r);
#pragma unroll
  for (int i = 0; i < PS; ++i) {
    stage_line_p(my_ring, plan, i, r, swizzle);
    bfly::commit_copies();
  }
  for (int g = 0; g < G; ++g) {
    if (base + g * 32 >= M) break;
    const long long m = base + g * 32 + lane;
    group_first_row = m - r;
    const int rows_left = rows_left_of(group_first_row);
    const T* const rows = weights + group_first_row * ld;
    const T* const my_row = weights + m * ld;
    unsigned int screen = 0u;
    T running = T(0);
    for (int s = 0; s < STEPS; ++s) {
      bfly::wait_copies<PS - 1>();
      __syncwarp();
      T a[BLOCKS_IN_FLIGHT][W];
#pragma unroll
      for (int j = 0; j < BLOCKS_IN_FLIGHT; ++j)
        load_staged_block_p(a[j], my_ring, s * LINE_COLUMNS + j * W + r, r, swizzle);
      __syncwarp();
      if (s + PS < STEPS) stage_line_p(my_ring, plan, s + PS, r, swizzle);
      bfly::commit_copies();
#pragma unroll
      for (int j = 0; j < BLOCKS_IN_FLIGHT; ++j) {
        const int b = s * BLOCKS_IN_FLIGHT + j;
        screen_block(a[j], screen);
        running += block_total(a[j], r);
        if ((b + 1) % CHUNK_BLOCKS == 0) running_total[b / CHUNK_BLOCKS][lane] = running;
      }
    }
    // The ring is read: the next group's first lines go out before this group's pass 2 waits on memory.
    if (g + 1 < G && base + (g + 1) * 32 < M) {
      const long long next_first = group_first_row + 32;
      plan = plan_stages(weights + next_first * ld, ld, rows_left_of(next_first), r);
#pragma unroll
      for (int i = 0; i < PS; ++i) {
        stage_line_p(my_ring, plan, i, r, swizzle);
        bfly::commit_copies();
      }
    }
    const bool bad_row =
        bfly::group_any(!bfly::screen_passed(screen, T()), W) && m < M && bfly::row_has_unusable_weight(my_row, K);
    const T total = running_total[CHUNKS - 1][lane];
    const bool valid = m < M && !bad_row && bfly::valid_total(total);
    const T u =
        bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, iteration), T());
    const T target = valid ? bfly::scaled_uniform(u, total) : T(0);
    int chunk = 0;
    {
      int hi = CHUNKS - 1;
      while (chunk < hi) {
        const int mid = (chunk + hi) >> 1;
        if (target < running_total[mid][lane]) hi = mid; else chunk = mid + 1;
      }
    }
    T low = chunk > 0 ? running_total[chunk - 1][lane] : T(0);
    T high = low;
    bool found = false;
    T run = low;
    T raw[CHUNK_BLOCKS][W];
#pragma unroll
    for (int t = 0; t < CHUNK_BLOCKS; ++t) load_chosen_blocks(raw[t], rows, ld, rows_left, chunk * CHUNK_BLOCKS + t, r);
    int found_t = 0;
#pragma unroll
    for (int t = 0; t < CHUNK_BLOCKS; ++t) {
      T a[W];
#pragma unroll
      for (int i = 0; i < W; ++i) a[i] = raw[t][i];
      build_table(a, r);
      const T next = run + a[W - 1];
      if (!found && target < next) { found = true; found_t = t; low = run; high = next; }
      run = next;
    }
    const int block = chunk * CHUNK_BLOCKS + found_t;
    T a[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const int tk = __shfl_sync(FULL, found_t, k, W);
      T v = raw[0][k];
#pragma unroll
      for (int t = 1; t < CHUNK_BLOCKS; ++t) v = tk == t ? raw[t][k] : v;
      a[k] = v;
    }
    build_table(a, r);
    int draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);
    const bool again = valid && (draw < 0 || !(my_row[draw] > T(0)));
    draw = bfly::sequential_draw_by_warp(again, my_row, K, u, draw);
    if (valid) {
      out[m] = draw;
    } else if (m < M) {
      out[m] = -1;
      bfly::report_invalid_row(invalid_rows, m);
    }
    __syncwarp();  // every lane has read running_total before the next group's pass 1 writes it
  }
}

// Fresh weights in (0, 1]: a hash of the index and a seed.
__global__ void fill(float* w, long long n, unsigned long long seed) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
    unsigned long long x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    x ^= x >> 31; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 27; x *= 0x94d049bb133111ebull; x ^= x >> 33;
    w[i] = static_cast<float>((x >> 40) + 1) * (1.0f / 16777216.0f);
  }
}

__global__ void read_ceiling(const float4* p, long long n, float* sink) {
  float s = 0.f;
  for (long long i = blockIdx.x * 512LL + threadIdx.x; i < n; i += 512LL * gridDim.x) {
    const float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1.2345f) sink[threadIdx.x] = s;
}
}  // namespace proto

using namespace proto;

template <typename Launch>
double median_ms(Launch launch, int runs) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> t;
  for (int i = 0; i < runs; ++i) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One launch with each CTA's start, end and SM written out: how many CTAs run over time (5 us bins), and the spread
// of the CTAs' lives.
template <typename Kernel>
void timeline(const char* name, long long M, int threads, Kernel kernel, float* w_, int* out_,
              unsigned long long* invalid_, unsigned long long seed_) {
  const int grid = static_cast<int>((M + 31) / 32);
  unsigned int* times;
  CHECK(cudaMalloc(&times, grid * 12LL));
  CHECK(cudaMemcpyToSymbol(cta_times, &times, sizeof(times)));
  kernel<<<grid, threads>>>(w_, M, K, out_, invalid_, seed_, 3u);
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned int> t(grid * 3LL);
  CHECK(cudaMemcpy(t.data(), times, grid * 12LL, cudaMemcpyDeviceToHost));
  unsigned int* none = nullptr;
  CHECK(cudaMemcpyToSymbol(cta_times, &none, sizeof(none)));
  CHECK(cudaFree(times));
  unsigned int t0 = t[0];
  for (int b = 0; b < grid; ++b) t0 = std::min(t0, t[3 * b]);
  std::vector<double> life;
  double span = 0, first_wave_end = 1e30, last_start = 0;
  for (int b = 0; b < grid; ++b) {
    const double s = (t[3 * b] - t0) * 1e-3, e = (t[3 * b + 1] - t0) * 1e-3;
    life.push_back(e - s);
    span = std::max(span, e);
    first_wave_end = std::min(first_wave_end, e);
    last_start = std::max(last_start, s);
  }
  std::vector<double> sorted = life;
  std::sort(sorted.begin(), sorted.end());
  std::printf("timeline %s: %d CTAs over %.1f us; life median %.1f us (10%% %.1f, 90%% %.1f, max %.1f); first end %.1f us, "
              "last start %.1f us\n  CTAs running each 5 us:", name, grid, span, sorted[grid / 2], sorted[grid / 10],
              sorted[grid * 9 / 10], sorted.back(), first_wave_end, last_start);
  const int bins = static_cast<int>(span / 5) + 1;
  std::vector<double> running(bins, 0.0);
  for (int b = 0; b < grid; ++b) {
    const double s = (t[3 * b] - t0) * 1e-3, e = (t[3 * b + 1] - t0) * 1e-3;
    for (int i = 0; i < bins; ++i) {
      const double lo = i * 5.0, hi = lo + 5.0;
      const double overlap = std::min(hi, e) - std::max(lo, s);
      if (overlap > 0) running[i] += overlap / 5.0;
    }
  }
  for (int i = 0; i < bins; ++i) std::printf(" %.0f", running[i]);
  std::printf("\n");
}

// What both modes allocate: `max_bytes` of random weights (filled from a seed of the clock), two outputs of one int a
// row, the invalid-row counters and the read ceiling's sink. Never freed: the process ends after one mode.
struct Arrays {
  float* w;
  int* out0;
  int* out1;
  unsigned long long* invalid;
  float* sink;
  unsigned long long seed;
  Arrays(long long max_bytes, const cudaDeviceProp& prop) {
    const long long max_rows = max_bytes / (K * 4);
    CHECK(cudaMalloc(&w, max_bytes));
    CHECK(cudaMalloc(&out0, max_rows * 4));
    CHECK(cudaMalloc(&out1, max_rows * 4));
    CHECK(cudaMalloc(&invalid, 16));
    CHECK(cudaMalloc(&sink, 4096));
    seed = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
    proto::fill<<<prop.multiProcessorCount * 16, 256>>>(w, max_bytes / 4, seed);
    CHECK(cudaDeviceSynchronize());
  }
  // The read ceiling over the first `bytes` of the weights, measured in this process (both modes compare with it).
  double read_ceiling_ms(long long bytes, int sms, int runs) const {
    const float4* const weights = reinterpret_cast<const float4*>(w);
    return median_ms([&] { proto::read_ceiling<<<sms * 8, 512>>>(weights, bytes / 16, sink); }, runs);
  }
  // The generated kernel alone over M rows: its time, and its draws (into out0, copied to `reference`) that the
  // variants' draws are counted against.
  double generated_ms(long long M, int runs, std::vector<int>& reference) const {
    const int grid = static_cast<int>((M + 31) / 32);
    CHECK(cudaMemset(out0, 0xff, M * 4));
    const double ms = median_ms([&] { GEN_KERNEL<<<grid, 32>>>(w, M, K, out0, invalid, seed ^ 7, 3u); }, runs);
    reference.resize(M);
    CHECK(cudaMemcpy(reference.data(), out0, M * 4, cudaMemcpyDeviceToHost));
    return ms;
  }
};

// main's "tail" mode (tenth session, not run yet): the generated kernel over the rows of all but the last T CTAs, and
// row_parts<P> over those T CTAs' rows in a second launch, overlapping the first (programmatic dependent launch: the
// generated kernel lets the next launch start as soon as its CTAs have all started) or after it. A launch whose CTAs
// start at scattered times ends raggedly: its last CTAs run alone at one warp's pace (78 us at f32 K = 4096, 1 GiB),
// and no second launch can end it sooner (bench/NOTES.md, tenth session). CTAs of P warps live about 1 / P as long
// and take the slots the generated kernel's CTAs leave, so the ragged end should shrink to theirs. The draws of the
// last rows differ from the generated kernel's where u' falls within rounding of a part's end: counted.
template <int P>
void run_tail(long long M, int wave, double ceiling_ms, int runs, const Arrays& a, const std::vector<int>& reference,
              bool overlap) {
  const int grid = static_cast<int>((M + 31) / 32);
  for (const double fraction : {0.125, 0.25, 0.5, 1.0}) {
    const int tail_ctas = static_cast<int>(fraction * wave);
    const int grid_a = grid - tail_ctas;
    const long long M_a = 32LL * grid_a;
    auto kernel_b = row_parts<P, 8 / P, kAll, kSpliced>;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(tail_ctas);
    config.blockDim = dim3(32 * P);
    config.attrs = &attribute;
    config.numAttrs = overlap ? 1 : 0;
    const unsigned long long s7 = a.seed ^ 7;
    const auto launch = [&] {
      GEN_KERNEL<<<grid_a, 32>>>(a.w, M_a, K, a.out1, a.invalid, s7, 3u);
      CHECK(cudaLaunchKernelEx(&config, kernel_b, static_cast<const T*>(a.w), M, static_cast<long long>(K), a.out1,
                               a.invalid, s7, 3u, grid_a));
    };
    CHECK(cudaMemset(a.out1, 0xff, M * 4));
    const double ms = median_ms(launch, runs);
    std::vector<int> drawn(M);
    CHECK(cudaMemcpy(drawn.data(), a.out1, M * 4, cudaMemcpyDeviceToHost));
    long long mismatches = 0, unwritten = 0;
    for (long long i = 0; i < M; ++i) {
      mismatches += drawn[i] != reference[i];
      unwritten += drawn[i] == -1 && reference[i] != -1;
    }
    std::printf("%-10lld P%d-tail%-5.3f%s %8lld %10.4f %9.3f %10lld (%lld rows by the parts, %lld unwritten)\n",
                M * K * 4, P, fraction, overlap ? "-pdl" : "    ", M, ms, ceiling_ms / ms, mismatches,
                M - M_a, unwritten);
  }
}

int tail_mode(int runs) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int ctas_per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, GEN_KERNEL, 32, 0));
  const int wave = ctas_per_sm * prop.multiProcessorCount;
  const Arrays a(2LL << 30, prop);
  std::printf("%s, %d SMs, %d CTAs of the generated kernel an SM (a wave of %d); K = %d, f32 rows on lines; tail "
              "mode; median of %d launches after 3\n", prop.name, prop.multiProcessorCount, ctas_per_sm, wave, K,
              runs);
  std::printf("%-10s %-16s %8s %10s %9s %10s\n", "bytes", "kernel", "M", "ms", "fraction", "mismatches");
  for (long long bytes : {512LL << 20, 1LL << 30, 2LL << 30}) {
    const long long M = bytes / (K * 4);
    const double ceiling_ms = a.read_ceiling_ms(bytes, prop.multiProcessorCount, runs);
    std::printf("%-10lld %-16s %8s %10.4f %9.3f\n", bytes, "ceiling", "", ceiling_ms, 1.0);
    std::vector<int> reference;
    const double gen_ms = a.generated_ms(M, runs, reference);
    std::printf("%-10lld %-16s %8lld %10.4f %9.3f\n", bytes, "generated", M, gen_ms, ceiling_ms / gen_ms);
    for (const bool overlap : {true, false}) {
      run_tail<2>(M, wave, ceiling_ms, runs, a, reference, overlap);
      run_tail<4>(M, wave, ceiling_ms, runs, a, reference, overlap);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 15;
  if (argc > 2 && std::string(argv[2]) == "tail") return tail_mode(runs);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const Arrays a(4LL << 30, prop);
  std::printf("%s, %d SMs; K = %d, f32 rows on lines; median of %d launches after 3\n", prop.name,
              prop.multiProcessorCount, K, runs);
  std::printf("%-10s %-11s %8s %10s %9s %10s\n", "bytes", "kernel", "M", "ms", "fraction", "mismatches");
  for (long long bytes : {256LL << 20, 512LL << 20, 1LL << 30, 2LL << 30, 4LL << 30}) {
    const long long M = bytes / (K * 4);
    const int grid = static_cast<int>((M + 31) / 32);
    const double ceiling_ms = a.read_ceiling_ms(bytes, prop.multiProcessorCount, runs);
    std::printf("%-10lld %-11s %8s %10.4f %9.3f\n", bytes, "ceiling", "", ceiling_ms, 1.0);
    std::vector<int> reference, drawn(M);
    const auto run_variant = [&](const char* name, int threads, auto kernel) {
      CHECK(cudaMemset(a.out1, 0xff, M * 4));
      const double ms =
          median_ms([&] { kernel<<<grid, threads>>>(a.w, M, K, a.out1, a.invalid, a.seed ^ 7, 3u, 0); }, runs);
      CHECK(cudaMemcpy(drawn.data(), a.out1, M * 4, cudaMemcpyDeviceToHost));
      long long mismatches = 0;
      for (long long i = 0; i < M; ++i) mismatches += drawn[i] != reference[i];
      std::printf("%-10lld %-11s %8lld %10.4f %9.3f %10lld\n", bytes, name, M, ms, ceiling_ms / ms, mismatches);
    };
    const auto run_grouped = [&](const char* name, int groups, auto kernel) {
      const int grid_g = static_cast<int>((M + 32LL * groups - 1) / (32LL * groups));
      CHECK(cudaMemset(a.out1, 0xff, M * 4));
      const double ms = median_ms([&] { kernel<<<grid_g, 32>>>(a.w, M, K, a.out1, a.invalid, a.seed ^ 7, 3u); }, runs);
      CHECK(cudaMemcpy(drawn.data(), a.out1, M * 4, cudaMemcpyDeviceToHost));
      long long mismatches = 0;
      for (long long i = 0; i < M; ++i) mismatches += drawn[i] != reference[i];
      std::printf("%-10lld %-11s %8lld %10.4f %9.3f %10lld\n", bytes, name, M, ms, ceiling_ms / ms, mismatches);
    };
    const double gen_ms = a.generated_ms(M, runs, reference);
    long long bad = 0;
    for (long long i = 0; i < M; ++i) bad += reference[i] < 0 || reference[i] >= K;
    std::printf("%-10lld %-11s %8lld %10.4f %9.3f %10lld (draws out of range)\n", bytes, "generated", M, gen_ms,
                ceiling_ms / gen_ms, bad);
    run_variant("P1-S8", 32, row_parts<1, 8>);
    run_variant("P1-nopass2", 32, row_parts<1, 8, kNoPass2>);
    run_variant("P1-spliced", 32, row_parts<1, 8, kAll, kSpliced>);
    run_grouped("G2-spliced", 2, row_groups<2>);
    run_grouped("G4-spliced", 4, row_groups<4>);
  }
  return 0;
}
