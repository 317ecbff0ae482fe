// The ahead-of-time header that `bfly-gen generate` writes: one generated kernel, self-contained, plus an inline
// host launch function, for a user's own nvcc build.
#pragma once

#include "bfly/spec/kernel_spec.hpp"

#include <string>

namespace bfly::cli {

// The header text for `spec`: a usage comment, the kernel with bfly's fragments pasted in
// (gen::inline_headers), and under `#ifdef __CUDACC__` the function
//   cudaError_t <kernel_name>_launch(const T* weights, long long M, long long ld, int* out,
//                                    unsigned long long* invalid_rows, unsigned long long seed,
//                                    unsigned int iteration, cudaStream_t stream = 0);
// The same spec always gives the same bytes.
std::string aot_header(const gen::KernelSpec& spec);

}  // namespace bfly::cli
