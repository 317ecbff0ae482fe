// The catalog of CPU-compiled draw-test kernels, assembled from the generated shards.
#include "cpu_kernels.hpp"

#include "bfly/gen/spec_catalog.hpp"

#include <algorithm>
#include <stdexcept>

namespace bfly::test {

// Defined in the generated draw_kernels_<i>.cpp shards.
#define BFLY_DECLARE_SHARD(i) void register_draw_kernels_##i(std::vector<CpuKernel>& out);
BFLY_DECLARE_SHARD(0) BFLY_DECLARE_SHARD(1) BFLY_DECLARE_SHARD(2) BFLY_DECLARE_SHARD(3)
BFLY_DECLARE_SHARD(4) BFLY_DECLARE_SHARD(5) BFLY_DECLARE_SHARD(6) BFLY_DECLARE_SHARD(7)
#undef BFLY_DECLARE_SHARD
static_assert(BFLY_DRAW_KERNEL_SHARDS == 8, "update the shard list above");

const std::vector<CpuKernel>& cpu_kernels() {
  static const std::vector<CpuKernel> ordered = [] {
    std::vector<CpuKernel> all;
    register_draw_kernels_0(all); register_draw_kernels_1(all); register_draw_kernels_2(all);
    register_draw_kernels_3(all); register_draw_kernels_4(all); register_draw_kernels_5(all);
    register_draw_kernels_6(all); register_draw_kernels_7(all);
    const std::vector<gen::KernelSpec> specs = gen::draw_test_specs();
    std::vector<CpuKernel> out;
    for (const gen::KernelSpec& spec : specs) {
      const auto it = std::find_if(all.begin(), all.end(), [&](const CpuKernel& k) { return k.spec == spec; });
      if (it == all.end()) throw std::logic_error("draw-test kernel missing from the generated shards");
      out.push_back(*it);
    }
    return out;
  }();
  return ordered;
}

const CpuKernel* find_cpu_kernel(std::string_view kernel_name) {
  for (const CpuKernel& k : cpu_kernels())
    if (k.name == kernel_name) return &k;
  return nullptr;
}

void run_on_cpu(const CpuKernel& kernel, const void* weights, long long M, long long ld, int* out,
                unsigned long long* invalid_rows, unsigned long long seed, unsigned int iteration) {
  if (M > 0) kernel.launch(weights, M, ld, out, invalid_rows, seed, iteration);
}

}  // namespace bfly::test
