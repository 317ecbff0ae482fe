// The multi-GPU bench's synthetic corpus, made on each GPU (no token crosses PCIe): LDA's generative process with
// hashed randomness. The corpus has `kTrueTopics` topics, each owning vocab / kTrueTopics consecutive words with a
// skewed (squared-uniform) frequency inside them; document m mixes three of them, token t picks one of the three.
#include "synthetic_words.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace {

constexpr int kTrueTopics = 64;

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One block per document (grid-stride), its threads over the document's tokens.
__global__ void synthetic_words(const long long* doc_offsets, long long docs, long long first_doc, int* words,
                                int vocab, unsigned long long seed) {
  const int block_words = vocab / kTrueTopics > 0 ? vocab / kTrueTopics : 1;
  for (long long m = blockIdx.x; m < docs; m += gridDim.x) {
    const unsigned long long doc_hash = mix(seed ^ mix(static_cast<unsigned long long>(first_doc + m) + 1));
    for (long long t = doc_offsets[m] + threadIdx.x; t < doc_offsets[m + 1]; t += blockDim.x) {
      const unsigned long long h = mix(doc_hash ^ mix(static_cast<unsigned long long>(t) * 0x9e3779b97f4a7c15ull));
      const int topic = static_cast<int>((doc_hash >> (16 * (h % 3))) % kTrueTopics);
      const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
      const int rank = static_cast<int>(u * u * block_words);
      const long long word = static_cast<long long>(topic) * block_words + rank;
      words[t] = static_cast<int>(word < vocab ? word : vocab - 1);
    }
  }
}

}  // namespace

void make_synthetic_words(const long long* doc_offsets, long long docs, long long first_doc, int* words, int vocab,
                          unsigned long long seed) {
  if (docs == 0) return;
  const unsigned blocks = static_cast<unsigned>(docs < 65536 ? docs : 65536);
  synthetic_words<<<blocks, 256>>>(doc_offsets, docs, first_doc, words, vocab, seed);
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  if (error != cudaSuccess)
    throw std::runtime_error(std::string("synthetic_words kernel: ") + cudaGetErrorString(error));
}
