// The bench's own CUDA kernels, behind plain host functions (compiled by nvcc in baselines.cu, called from the
// C++ drivers bfly_bench.cpp and lda/lda_bench.cpp): the paper's baseline samplers (Steele & Tristan 2019,
// Algorithms 1-6), a warp-per-row sampler, the bandwidth ceilings, and the input expansion and random topics.
//
// Every sampler draws one category per row of M x K weights (row r at weights + r * ld), with the uniform of
// row r taken from the same Philox4x32-10 stream as bfly's generated kernels (templates/bfly/philox.cuh), so
// that all samplers do the same random-number work. None of the baselines checks its weights for validity
// (bfly's kernels do): they assume finite weights >= 0 and a positive total, as the bench's inputs are.
// All launches are asynchronous on `stream`; each function checks the launch and throws std::runtime_error.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bench {

// Algorithm 1 with the binary search of Algorithm 3: one thread per row reads its row sequentially (as the
// paper's baseline does, without transposed access), stores every running sum in the table p, then searches p.
// p is global scratch of M * K elements laid out column-major (p[j * M + m]), i.e. the layout CUDA gives a
// per-thread local array, so that a warp's stores of p[j] are coalesced. Extra traffic: K writes per row.
template <typename T>
void alg1(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
          cudaStream_t stream);

// Algorithm 1 without the table: pass 1 sums the row, pass 2 runs the sum again until it exceeds u * sum
// (Algorithm 2's linear search fused with the running sum). The "thread-per-row (two passes)" of docs/DESIGN.md
// section 8. Extra traffic: the part of each row that pass 2 re-reads (served by L1/L2 when it still holds it).
template <typename T>
void alg1_two_pass(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                   cudaStream_t stream);

// Algorithm 4 (with Algorithms 5 and 6 specialised to explicit weights, W = 32): one thread per row, the warp
// loads each 32 x 32 block with transposed access (lane r loads element j + r of row k on step k), transposes it
// in registers with (W/2) log2 W = 80 shuffles (Figure 2), accumulates the running sums into p (as alg1), and
// searches p with Algorithm 3. The leading remnant of K mod 32 elements is read per thread (Algorithm 6 lines 8-12).
template <typename T>
void alg4_regs(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
               cudaStream_t stream);

// Algorithm 4 as above, but the 32 x 32 block goes through shared memory (a padded tile per warp: the transposed
// load writes it row by row, each lane then reads its own row), like the paper's a_local array (Algorithm 6
// line 19, "transposed access to a_local").
template <typename T>
void alg4_smem(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
               cudaStream_t stream);

// Not from the paper: one warp per row. Pass 1: coalesced loads (four in flight per lane) and a shuffle reduce
// give the total. Pass 2: chunks of 32 weights, an inclusive shuffle scan per chunk, and a ballot finds the first
// category whose running sum exceeds u * total; it stops at the chunk that holds the draw.
template <typename T>
void warp_per_row(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                  cudaStream_t stream);

// The read ceiling: a grid-stride read-and-reduce of `bytes` (a multiple of 16) with 16-byte loads, four in
// flight per thread, `blocks_per_sm` blocks of 512 threads per multiprocessor (docs/DESIGN.md section 8: 8 x 512 per
// SM reached 3.05 TB/s on an H100). `sink` receives one float per block (so the loads cannot be dropped).
void read_ceiling(const void* data, std::size_t bytes, float* sink, int multiprocessors, int blocks_per_sm,
                  cudaStream_t stream);
// Blocks the read ceiling needs in `sink` (floats).
int read_ceiling_sink_size(int multiprocessors, int blocks_per_sm);

// Fills M rows of the input: row r (at dst + r * ld) = distinct row distinct_index(r, D) of `distinct`
// (D rows of K, contiguous). Elements between K and ld are left as they are.
template <typename T>
void expand_rows(T* dst, long long M, int K, long long ld, const T* distinct, int D, cudaStream_t stream);

// z[t] = a uniformly random topic in [0, K) (Philox of token t with `seed`, draw 7): lda-bench's starting state.
void random_topics(int* z, long long tokens, int K, std::uint64_t seed, cudaStream_t stream);

// Which of the D distinct rows row r repeats: a hash of r, so that rows sharing a distribution are not spaced
// at a period that lines up with warps or groups. The host uses the same function to count draws.
inline __host__ __device__ int distinct_index(long long r, int D) {
  unsigned long long x = static_cast<unsigned long long>(r) + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<int>(x % static_cast<unsigned long long>(D));
}

}  // namespace bench
