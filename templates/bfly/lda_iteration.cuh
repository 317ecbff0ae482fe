// The rest of an uncollapsed Gibbs iteration of LDA on the GPU, after the z-step (bfly::rt::LdaIteration):
// topic counts from z, theta and phi from the counts (posterior means or Dirichlet draws), and the collapsed
// log-likelihood. Formulas and random streams are those of the CPU reference (lda/include/bfly/lda/reference.hpp):
//   theta[m, k] = (n_dk + alpha_k) / (N_d + A)         or  g / sum_k g,  g ~ Gamma(n_dk + alpha_k),  A = sum alpha
//   phi[w, k]   = (n_wk + beta) / (n_k + V beta)       or  g / sum_w g,  g ~ Gamma(n_wk + beta)
//   gamma draw of element e: Philox(seed; e lo, e hi, stream << 24 | attempt, iteration), stream 1 theta, 2 phi
//   LL = sum_d [lgamma(A) - lgamma(N_d + A) + sum_k (lgamma(n_dk + alpha_k) - lgamma(alpha_k))]
//      + sum_k [lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_wk + beta) - lgamma(beta))]
// Every sum is formed in a fixed order (per-block partials, reduced by one block), so results do not depend on
// timing: a run is reproducible and resumes exactly. The entry points are generated from their descriptions
// (gen::lda_iteration_kernels(), bfly::gen::lda_iteration_source), one module per element type.
#ifndef BFLY_LDA_ITERATION_CUH
#define BFLY_LDA_ITERATION_CUH

#include "bfly/philox.cuh"

namespace bfly {
namespace lda {

constexpr unsigned int kStreamTheta = 1, kStreamPhi = 2;  // as in lda/include/bfly/lda/reference.hpp
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 8;  // launch with blockDim.x = 256: one warp per document or word row
constexpr int kReduceThreads = 256;
constexpr int kBatch = 8;  // row elements whose counts a lane loads before using them (estimate_theta, estimate_phi)

// A posterior mean (count + prior) / denominator, computed in double and rounded to T: theta's (n_dk + alpha_k) /
// (N_d + sum alpha) and phi's (n_wk + beta) / (n_k + V beta). The estimates and the averaging sums both form
// them here, so that the sums add exactly the values the estimates write.
template <typename T>
__device__ __forceinline__ T posterior_mean(int count, double prior, double denominator) {
  return static_cast<T>((count + prior) / denominator);
}

// A uniform in the open interval (0, 1) from 32 random bits, for logarithms.
__device__ __forceinline__ double open_uniform(unsigned int bits) {
  return (static_cast<double>(bits) + 0.5) * 2.3283064365386962890625e-10;
}

// Gamma(shape, 1) draws (Marsaglia & Tsang 2000; shape < 1 boosted by U^(1/shape)) of the cells k = first,
// first + stride, ... < K of one row: cell k's variate is the CPU reference's gamma_draw(shape_of(k), seed,
// index0 + k, stream, iteration) line for line (the same variates up to the last bits of log, pow, sqrt and cos),
// handed to put(k, g) in increasing k. Each trip of the loop is one attempt of the lane's current cell, and a lane
// moves on to its next cell as soon as one is accepted: a warp then runs about the mean number of attempts per
// cell (1.04 at shape 1.1) instead of the maximum over its 32 lanes at each cell (1.8), which a draw per cell
// inside the loop over cells cost (docs/LDA.md; bench/lda/NOTES.md, Dirichlet draws).
template <typename ShapeOf, typename Put>
__device__ __forceinline__ void gamma_draws(int first, int stride, int K, ShapeOf shape_of, unsigned long long seed,
                                            unsigned long long index0, unsigned int stream, unsigned int iteration,
                                            Put put) {
  const unsigned int key0 = static_cast<unsigned int>(seed), key1 = static_cast<unsigned int>(seed >> 32);
  unsigned int attempt = 0;
  double d = 0, c = 0, boost = 1.0;
  for (int k = first; k < K;) {
    const unsigned long long index = index0 + static_cast<unsigned long long>(k);
    const unsigned int index_lo = static_cast<unsigned int>(index), index_hi = static_cast<unsigned int>(index >> 32);
    const Philox4x32 r =
        philox4x32_10(Philox4x32{{index_lo, index_hi, (stream << 24) | attempt, iteration}}, key0, key1);
    if (attempt == 0) {  // a new cell: attempt 0's block also gives the boost's uniform (its last word)
      double shape = shape_of(k);
      boost = 1.0;
      if (shape < 1.0) {
        boost = pow(open_uniform(r.v[3]), 1.0 / shape);
        shape += 1.0;
      }
      d = shape - 1.0 / 3.0;
      c = 1.0 / sqrt(9.0 * d);
    }
    // Box-Muller normal from two words, acceptance uniform from the third.
    const double x = sqrt(-2.0 * log(open_uniform(r.v[0]))) *
                     cos(6.283185307179586476925 * (static_cast<double>(r.v[1]) * 2.3283064365386962890625e-10));
    const double t = 1.0 + c * x;
    bool accepted = false;
    double g = 0;
    if (t > 0.0) {
      const double v = t * t * t;
      if (log(open_uniform(r.v[2])) < 0.5 * x * x + d - d * v + d * log(v)) {
        g = d * v * boost;
        accepted = true;
      }
    }
    if (!accepted && ++attempt == (1u << 24)) {  // the reference's bound on the attempts
      g = d * boost;
      accepted = true;
    }
    if (accepted) {
      put(k, g);
      k += stride;
      attempt = 0;
    }
  }
}

// The sum over a warp, the same value in every lane (a fixed butterfly order).
__device__ __forceinline__ double warp_sum(double x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// The sum over the block (blockDim.x a multiple of 32, at most 1024), valid in thread 0; warps in order.
__device__ __forceinline__ double block_sum(double x) {
  __shared__ double warp_totals[32];
  x = warp_sum(x);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0) warp_totals[warp] = x;
  __syncthreads();
  double total = 0;
  if (threadIdx.x == 0)
    for (int i = 0; i < warps; ++i) total += warp_totals[i];
  __syncthreads();  // warp_totals may be reused by a later call
  return total;
}

// The log-likelihood term of a count: lgamma(count + prior) - lgamma(prior), 0 for a zero count. Counts below
// `table_size` are looked up in `table` (lgamma_table below), which holds the same expression's value, so a
// lookup gives the same bits as the direct evaluation: the lookup only saves lgamma calls, most of which would
// run on one or two lanes of a warp (a document has few non-zero topic counts).
__device__ __forceinline__ double count_term(int count, double prior, double lgamma_prior, const double* table,
                                             int table_size) {
  if (count == 0) return 0.0;
  if (count < table_size) return table[count];
  return lgamma(count + prior) - lgamma_prior;
}

// count_term for a prior read per topic: no lgamma of the prior unless the count is outside the table (which has
// no entries, table_size 0, for an asymmetric alpha).
__device__ __forceinline__ double topic_count_term(int count, double prior, const double* table, int table_size) {
  if (count == 0) return 0.0;
  if (count < table_size) return table[count];
  return lgamma(count + prior) - lgamma(prior);
}

// table[i] = lgamma(i + prior) - lgamma(prior) for i < n (grid-stride).
__device__ __forceinline__ void lgamma_table(double prior, int n, double* table) {
  const double lgamma_prior = lgamma(prior);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    table[i] = lgamma(i + prior) - lgamma_prior;
}

// Sets n ints to 0 (grid-stride).
__device__ __forceinline__ void fill_zero(int* data, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) data[i] = 0;
}

// Counts of z: one warp per document (grid-stride), lanes over its tokens. n_dk and n_wk by global atomics (one
// warp owns a document row, so its atomics rarely collide); n_k in a shared-memory histogram per block when
// `shared_topics` (K ints of dynamic shared memory), flushed once per block. Topics outside [0, K) are counted in
// bad[0] and skipped.
__device__ __forceinline__ void count_topics(const long long* doc_offsets, const int* words, const int* z, long long D,
                                             int K, int* n_dk, int* n_wk, int* n_k, unsigned long long* bad,
                                             int shared_topics) {
  extern __shared__ int topic_histogram[];
  if (shared_topics) {
    for (int k = threadIdx.x; k < K; k += blockDim.x) topic_histogram[k] = 0;
    __syncthreads();
  }
  const int lane = threadIdx.x % 32;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  for (long long m = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; m < D; m += warps) {
    const long long end = doc_offsets[m + 1];
    int* const row = n_dk + m * K;
    for (long long t = doc_offsets[m] + lane; t < end; t += 32) {
      const int k = z[t];
      if (k < 0 || k >= K) {
        atomicAdd(bad, 1ull);
        continue;
      }
      atomicAdd(row + k, 1);
      atomicAdd(n_wk + static_cast<long long>(words[t]) * K + k, 1);
      if (shared_topics) atomicAdd(topic_histogram + k, 1);
      else atomicAdd(n_k + k, 1);
    }
  }
  if (shared_topics) {
    __syncthreads();
    for (int k = threadIdx.x; k < K; k += blockDim.x)
      if (topic_histogram[k] != 0) atomicAdd(n_k + k, topic_histogram[k]);
  }
}

// theta from n_dk, one warp per document (grid-stride), and the documents' log-likelihood terms: block b writes
// its partial sum to ll_partials[b]. Document m is document first_doc + m of the whole corpus (a shard of a
// data-parallel run): its gamma draws use that index, so a shard draws what the whole corpus draws. `draw`:
// Dirichlet draws (the gamma variates written to the row, then divided by their sum); a row whose gamma sum is not
// positive and finite falls back to the mean, as on the CPU. alpha holds K values (alpha_k)
// and alpha_sum their sum as the host formed it (K alpha for a symmetric alpha, whose count terms come from
// alpha_terms; an asymmetric alpha passes terms = 0).
template <typename T>
__device__ __forceinline__ void estimate_theta(const long long* doc_offsets, long long D, long long first_doc, int K,
                                               const int* n_dk, const double* alpha, double alpha_sum,
                                               const double* alpha_terms, int terms, int draw,
                                               unsigned long long seed, unsigned int iteration, T* theta,
                                               double* ll_partials) {
  const int lane = threadIdx.x % 32;
  const double lgamma_alpha_sum = lgamma(alpha_sum);
  double ll = 0;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  for (long long m = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; m < D; m += warps) {
    const int* const n = n_dk + m * K;
    T* const row = theta + m * K;
    const double length = static_cast<double>(doc_offsets[m + 1] - doc_offsets[m]);
    if (lane == 0) ll += lgamma_alpha_sum - lgamma(length + alpha_sum);
    if (!draw) {
      // Posterior means and the count terms in one pass over the row, kBatch loads in flight per lane (one at a
      // time left the kernel waiting on memory: 0.52 TB/s at K = 1024 on an H100). The terms are added in the
      // same order as by the draw path below.
      const double denominator = length + alpha_sum;
      for (int k0 = lane; k0 < K; k0 += 32 * kBatch) {
        int counts[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) counts[u] = k0 + 32 * u < K ? n[k0 + 32 * u] : 0;
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int k = k0 + 32 * u;
          if (k >= K) break;
          const double alpha_k = alpha[k];
          if (counts[u] != 0) ll += topic_count_term(counts[u], alpha_k, alpha_terms, terms);
          row[k] = posterior_mean<T>(counts[u], alpha_k, denominator);
        }
      }
      continue;
    }
    for (int k = lane; k < K; k += 32)
      if (n[k] != 0) ll += topic_count_term(n[k], alpha[k], alpha_terms, terms);
    {
      // The variates go into the row itself, then are divided by their sum: one gamma draw per element. (Drawing
      // them again in the second pass doubled theta's D x K draws, which dominate a draw iteration on short
      // documents.) In f32 the variate is rounded before the division, so an element may differ from the CPU's
      // rounded g / sum by an ulp or two.
      const unsigned long long stream_row = static_cast<unsigned long long>(first_doc + m) * K;
      double sum = 0;
      gamma_draws(
          lane, 32, K, [&](int k) { return n[k] + alpha[k]; }, seed, stream_row, kStreamTheta, iteration,
          [&](int k, double g) {
            sum += g;
            row[k] = static_cast<T>(g);
          });
      sum = warp_sum(sum);
      if (sum > 0 && isfinite(sum)) {
        for (int k = lane; k < K; k += 32) row[k] = static_cast<T>(static_cast<double>(row[k]) / sum);
        continue;
      }
    }
    const double denominator = length + alpha_sum;
    for (int k = lane; k < K; k += 32) row[k] = posterior_mean<T>(n[k], alpha[k], denominator);
  }
  ll = block_sum(ll);
  if (threadIdx.x == 0) ll_partials[blockIdx.x] = ll;
}

// The words' log-likelihood terms of n_wk, one warp per word row; block b writes ll_partials[b]. With `phi`
// non-null, also phi as posterior means; with `gammas` non-null, instead the gamma variates of the draws (in
// double, normalised by column later: column_partials, column_finish, normalize_phi).
template <typename T>
__device__ __forceinline__ void estimate_phi(long long V, int K, const int* n_wk, const int* n_k, double beta,
                                             const double* beta_terms, int terms, unsigned long long seed,
                                             unsigned int iteration, T* phi, double* gammas, double* ll_partials) {
  const int lane = threadIdx.x % 32;
  const double lgamma_beta = lgamma(beta), v_beta = static_cast<double>(V) * beta;
  double ll = 0;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  for (long long w = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; w < V; w += warps) {
    const int* const n = n_wk + w * K;
    for (int k0 = lane; k0 < K; k0 += 32 * kBatch) {
      int counts[kBatch];  // kBatch loads in flight per lane, as in estimate_theta
#pragma unroll
      for (int u = 0; u < kBatch; ++u) counts[u] = k0 + 32 * u < K ? n[k0 + 32 * u] : 0;
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int k = k0 + 32 * u, count = counts[u];
        if (k >= K) break;
        if (count != 0) ll += count_term(count, beta, lgamma_beta, beta_terms, terms);
        if (phi != nullptr) phi[w * K + k] = posterior_mean<T>(count, beta, static_cast<double>(n_k[k]) + v_beta);
      }
    }
    if (gammas != nullptr)
      gamma_draws(
          lane, 32, K, [&](int k) { return n[k] + beta; }, seed, static_cast<unsigned long long>(w) * K, kStreamPhi,
          iteration, [&](int k, double g) { gammas[w * K + k] = g; });
  }
  ll = block_sum(ll);
  if (threadIdx.x == 0) ll_partials[blockIdx.x] = ll;
}

// Column sums of a V x K double matrix, stage 1: block (x, y) of 32 x 8 threads sums rows
// [y * rows_per_chunk, (y + 1) * rows_per_chunk) of columns 32 x .. 32 x + 31 into partial[y * K + k].
__device__ __forceinline__ void column_partials(const double* g, long long V, int K, long long rows_per_chunk,
                                                double* partial) {
  __shared__ double sums[8][33];
  const int k = blockIdx.x * 32 + threadIdx.x;
  const long long first = static_cast<long long>(blockIdx.y) * rows_per_chunk;
  const long long last = min(V, first + rows_per_chunk);
  double sum = 0;
  if (k < K)
    for (long long w = first + threadIdx.y; w < last; w += 8) sum += g[w * K + k];
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && k < K) {
    double total = 0;
    for (int i = 0; i < 8; ++i) total += sums[i][threadIdx.x];
    partial[static_cast<long long>(blockIdx.y) * K + k] = total;
  }
}

// Stage 2: sum[k] = partial[0 * K + k] + partial[1 * K + k] + ... in chunk order.
__device__ __forceinline__ void column_finish(const double* partial, int chunks, int K, double* sum) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= K) return;
  double total = 0;
  for (int c = 0; c < chunks; ++c) total += partial[static_cast<long long>(c) * K + k];
  sum[k] = total;
}

// phi[w, k] = g[w, k] / sum[k] (grid-stride).
template <typename T>
__device__ __forceinline__ void normalize_phi(const double* g, long long V, int K, const double* sum, T* phi) {
  const long long n = V * K, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    phi[i] = static_cast<T>(g[i] / sum[i % K]);
}

// Output averaging (LdaIteration::add_means): the posterior means of the current counts (posterior_mean, as
// estimate_theta and estimate_phi write them), added to running double sums, element by element (grid-stride). A
// run that averages its last iterations' means keeps these sums on the device instead of copying the state out.
template <typename T>
__device__ __forceinline__ void add_theta_means(const long long* doc_offsets, long long D, int K, const int* n_dk,
                                                const double* alpha, double alpha_sum, double* sums) {
  const long long n = D * K, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const long long m = i / K;
    const int k = static_cast<int>(i - m * K);
    const double denominator = static_cast<double>(doc_offsets[m + 1] - doc_offsets[m]) + alpha_sum;
    sums[i] += static_cast<double>(posterior_mean<T>(n_dk[i], alpha[k], denominator));
  }
}

template <typename T>
__device__ __forceinline__ void add_phi_means(long long V, int K, const int* n_wk, const int* n_k, double beta,
                                              double* sums) {
  const double v_beta = static_cast<double>(V) * beta;
  const long long n = V * K, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int k = static_cast<int>(i % K);
    sums[i] += static_cast<double>(posterior_mean<T>(n_wk[i], beta, static_cast<double>(n_k[k]) + v_beta));
  }
}

// The log-likelihood: the partials of the theta and phi kernels in order, plus the topics' terms; one block of
// kReduceThreads threads; result[0] receives the total.
__device__ __forceinline__ void finish_log_likelihood(const double* partials, int count, const int* n_k, int K,
                                                      long long V, double beta, double* result) {
  const double v_beta = static_cast<double>(V) * beta, lgamma_v_beta = lgamma(v_beta);
  double sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  for (int k = threadIdx.x; k < K; k += blockDim.x) sum += lgamma_v_beta - lgamma(static_cast<double>(n_k[k]) + v_beta);
  sum = block_sum(sum);
  if (threadIdx.x == 0) result[0] = sum;
}

}  // namespace lda
}  // namespace bfly

#endif  // BFLY_LDA_ITERATION_CUH
