// The catalog of CPU-compiled draw-test kernels, assembled from the generated shards.
#include "cpu_kernels.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <algorithm>
#include <stdexcept>

namespace bfly::test {

// Defined in the generated draw_kernels_<i>.cpp shards.
#define BFLY_DECLARE_SHARD(i) \
  void register_draw_kernels_##i(std::vector<CpuKernel>& out, std::vector<CpuLdaKernel>& lda);
BFLY_DECLARE_SHARD(0) BFLY_DECLARE_SHARD(1) BFLY_DECLARE_SHARD(2) BFLY_DECLARE_SHARD(3)
BFLY_DECLARE_SHARD(4) BFLY_DECLARE_SHARD(5) BFLY_DECLARE_SHARD(6) BFLY_DECLARE_SHARD(7)
#undef BFLY_DECLARE_SHARD
static_assert(BFLY_DRAW_KERNEL_SHARDS == 8, "update the shard list above");
// Defined in the generated lda_baseline_kernels.cpp.
void register_lda_baseline_kernels(std::vector<CpuLdaBaselineKernel>& out);

namespace {

struct Registry {
  std::vector<CpuKernel> sample;
  std::vector<CpuLdaKernel> lda;
};

// The shards' kernels in catalog order.
template <typename Kernel>
std::vector<Kernel> in_catalog_order(const std::vector<Kernel>& all, const std::vector<gen::KernelSpec>& specs) {
  std::vector<Kernel> out;
  for (const gen::KernelSpec& spec : specs) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const Kernel& k) { return k.spec == spec; });
    if (it == all.end()) throw std::logic_error("draw-test kernel missing from the generated shards");
    out.push_back(*it);
  }
  return out;
}

const Registry& registry() {
  static const Registry ordered = [] {
    Registry all;
    register_draw_kernels_0(all.sample, all.lda); register_draw_kernels_1(all.sample, all.lda);
    register_draw_kernels_2(all.sample, all.lda); register_draw_kernels_3(all.sample, all.lda);
    register_draw_kernels_4(all.sample, all.lda); register_draw_kernels_5(all.sample, all.lda);
    register_draw_kernels_6(all.sample, all.lda); register_draw_kernels_7(all.sample, all.lda);
    return Registry{in_catalog_order(all.sample, gen::draw_test_specs()),
                    in_catalog_order(all.lda, gen::lda_test_specs())};
  }();
  return ordered;
}

}  // namespace

const std::vector<CpuKernel>& cpu_kernels() { return registry().sample; }
const std::vector<CpuLdaKernel>& cpu_lda_kernels() { return registry().lda; }

const std::vector<CpuLdaBaselineKernel>& cpu_lda_baseline_kernels() {
  static const std::vector<CpuLdaBaselineKernel> kernels = [] {
    std::vector<CpuLdaBaselineKernel> registered;
    register_lda_baseline_kernels(registered);
    const std::vector<gen::LdaBaselineSpec> specs = gen::lda_baseline_test_specs();
    if (registered.size() != specs.size() ||
        !std::equal(specs.begin(), specs.end(), registered.begin(),
                    [](const gen::LdaBaselineSpec& spec, const CpuLdaBaselineKernel& k) { return k.spec == spec; }))
      throw std::logic_error("the generated LDA baseline test kernels are not gen::lda_baseline_test_specs()");
    return registered;
  }();
  return kernels;
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
