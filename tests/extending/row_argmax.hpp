// A test-only kernel family, added the way docs/EXTENDING.md says an operation is added, to prove that the three
// pieces it names are all a new family needs: (1) the family row (its arguments), (2) the skeleton, (3) the emitter
// that fills the skeleton. Everything else (the kernel signature, the launch contract, the argument packing, the
// CPU launcher, the ahead-of-time launch function, the NVRTC compile) comes from bfly's shared machinery.
//
// row_argmax writes, for each of M rows of K weights, the column of the row's largest weight (the first on ties).
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace bfly::test::extending {

// (1) The family: its arguments, with the roles the checks follow.
inline constexpr gen::KernelArg kRowArgmaxArgs[] = {
    {"weights", gen::ArgType::const_elements, gen::ArgRole::input, "device array, M rows of K weights"},
    {"M", gen::ArgType::i64, gen::ArgRole::items, "rows"},
    {"ld", gen::ArgType::i64, gen::ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    {"out", gen::ArgType::i32s, gen::ArgRole::output, "device array of M ints: the column of each row's largest weight"},
};
inline constexpr gen::KernelFamily kRowArgmax{"row_argmax", "writes the column of each row's largest weight", "row",
                                              "row_argmax.skeleton.cuh (test)", kRowArgmaxArgs};

// (2) The skeleton (bfly's own live in templates/bfly/*.skeleton.cuh; a test keeps its text here).
inline constexpr std::string_view kRowArgmaxSkeleton = R"(// {{kernel_name}}: a test-only family (row_argmax), K = {{K}}.
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {
constexpr int K = {{K}};  // weights per row
constexpr int THREADS = {{threads_per_cta}};  // threads per CTA, one per row
}  // namespace {{detail_namespace}}

{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (m >= M) return;
  const {{T}}* const row = weights + m * ld;
  int best = 0;
  for (int j = 1; j < K; ++j)
    if (row[j] > row[best]) best = j;
  out[m] = best;
}
)";

// (3) The emitter: the kernel's name and geometry, and the values of the skeleton's own placeholders.
inline gen::Source generate_row_argmax(int K, gen::ElementType type) {
  gen::FamilyKernel kernel;
  kernel.family = &kRowArgmax;
  kernel.type = type;
  kernel.kernel_name = fmt::format("test_row_argmax_{}_k{}", gen::name_of(type), K);
  kernel.geometry.threads_per_cta = 128;
  kernel.geometry.rows_per_cta = 128;
  kernel.skeleton_text = kRowArgmaxSkeleton;
  kernel.headers = {"bfly/sample_support.cuh"};
  return gen::fill_family_skeleton(
      kernel, {{"kernel_name", kernel.kernel_name}, {"K", std::to_string(K)}, {"T", std::string(gen::cuda_type(type))}});
}

inline constexpr int kK = 37;  // the K the build-time emitter compiles for the CPU

}  // namespace bfly::test::extending
