// The paper's LDA z-step baselines as plain CUDA (bench/lda/lda_baselines.cu), for lda-bench: the same inputs and
// contract as bfly's generated lda_z kernels (rt::LdaZStep): one thread per document, weights
// theta[m, k] * phi[words[t], k] (rounded products, never fused), the uniform of token t from
// Philox(seed; t, 0, iteration), and the drawn topic the smallest k with u * total < prefix[k].
// theta is D x K and phi V x K, both with row stride K. p is scratch of D x K elements (column-major per thread:
// p[k * D + m], the layout CUDA gives a per-thread local array, so a warp's stores are coalesced).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace bench::lda {

// Algorithm 1 with Algorithm 3: per token, the thread reads theta's and phi's rows sequentially (no transposed
// access), stores the running sums in p, and binary-searches p.
template <typename T>
void alg1(const T* theta, const T* phi, const long long* doc_offsets, const int* words, int* z, long long D, int K,
          T* p, std::uint64_t seed, unsigned iteration, cudaStream_t stream);

// Algorithm 4 with Algorithms 5-7 (W = 32): one document per lane, all lanes stepping through the longest
// document of their warp (the master-index idiom); each 32 x 32 block of phi (and theta) rows is loaded with
// transposed access (on step k lane r loads element j + r of lane k's row, so the warp reads 32 consecutive
// words), transposed in registers with (W/2) log2 W = 80 shuffles, multiplied, and its running sums stored in p;
// the leading remnant of K mod 32 is read per thread. Then Algorithm 3's binary search over p.
template <typename T>
void alg4(const T* theta, const T* phi, const long long* doc_offsets, const int* words, int* z, long long D, int K,
          T* p, std::uint64_t seed, unsigned iteration, cudaStream_t stream);

// z[t] = a uniformly random topic in [0, K) (Philox of token t with `seed`): a starting state for the bench.
void random_topics(int* z, long long tokens, int K, std::uint64_t seed, cudaStream_t stream);

}  // namespace bench::lda
