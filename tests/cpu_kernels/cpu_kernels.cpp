// The catalog of CPU-compiled draw-test kernels, assembled from the generated shards.
#include "cpu_kernels.hpp"

#include "bfly/cpu/thread_stacks.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include <algorithm>
#include <stdexcept>

namespace bfly::cpu {
// Defined in the generated draw_kernels_<i>.cpp shards and lda_baseline_kernels.cpp.
#define BFLY_DECLARE_SHARD(i) void register_draw_kernels_##i(std::vector<CpuKernel>& out);
BFLY_DECLARE_SHARD(0) BFLY_DECLARE_SHARD(1) BFLY_DECLARE_SHARD(2) BFLY_DECLARE_SHARD(3)
BFLY_DECLARE_SHARD(4) BFLY_DECLARE_SHARD(5) BFLY_DECLARE_SHARD(6) BFLY_DECLARE_SHARD(7)
#undef BFLY_DECLARE_SHARD
void register_range_kernels_0(std::vector<CpuKernel>& out);
void register_range_kernels_1(std::vector<CpuKernel>& out);
void register_range_kernels_2(std::vector<CpuKernel>& out);
void register_range_kernels_3(std::vector<CpuKernel>& out);
void register_lda_baseline_kernels(std::vector<CpuKernel>& out);
}  // namespace bfly::cpu

namespace bfly::test {
namespace {
static_assert(BFLY_DRAW_KERNEL_SHARDS == 8, "update the shard list above");

// The catalogs' kernels put more static TLS into a test binary than a default thread stack holds: the threads that
// other libraries start (NCCL's) get room for it before main.
[[maybe_unused]] const bool stacks_hold_static_tls = cpu::reserve_stack_for_static_tls();

const std::vector<cpu::CpuKernel>& compiled() {
  static const std::vector<cpu::CpuKernel> all = [] {
    std::vector<cpu::CpuKernel> out;
    cpu::register_draw_kernels_0(out); cpu::register_draw_kernels_1(out); cpu::register_draw_kernels_2(out);
    cpu::register_draw_kernels_3(out); cpu::register_draw_kernels_4(out); cpu::register_draw_kernels_5(out);
    cpu::register_draw_kernels_6(out); cpu::register_draw_kernels_7(out);
    cpu::register_range_kernels_0(out); cpu::register_range_kernels_1(out); cpu::register_range_kernels_2(out);
    cpu::register_range_kernels_3(out);
    cpu::register_lda_baseline_kernels(out);
    return out;
  }();
  return all;
}

// The compiled kernels of `specs`, in that order.
template <typename Spec>
std::vector<CatalogKernel<Spec>> in_catalog_order(const std::vector<Spec>& specs) {
  std::vector<CatalogKernel<Spec>> out;
  for (const Spec& spec : specs) {
    const std::string name = gen::kernel_name(spec);
    const auto it = std::find_if(compiled().begin(), compiled().end(),
                                 [&](const cpu::CpuKernel& k) { return k.name == name; });
    if (it == compiled().end()) throw std::logic_error("catalog kernel " + name + " missing from the generated files");
    out.push_back(CatalogKernel<Spec>{spec, name, *it});
  }
  return out;
}

}  // namespace

const std::vector<CpuKernel>& cpu_kernels() {
  static const std::vector<CpuKernel> kernels = in_catalog_order(gen::draw_test_specs());
  return kernels;
}
const std::vector<CpuKernel>& cpu_split_kernels() {
  static const std::vector<CpuKernel> kernels = in_catalog_order(gen::split_test_specs());
  return kernels;
}
const std::vector<CpuKernel>& cpu_small_kernels() {
  static const std::vector<CpuKernel> kernels = in_catalog_order(gen::small_test_specs());
  return kernels;
}
const std::vector<CpuKernel>& cpu_pairs_kernels() {
  static const std::vector<CpuKernel> kernels = in_catalog_order(gen::pairs_test_specs());
  return kernels;
}
const std::vector<CpuLdaKernel>& cpu_lda_kernels() {
  static const std::vector<CpuLdaKernel> kernels = in_catalog_order(gen::lda_test_specs());
  return kernels;
}
const std::vector<CpuLdaBaselineKernel>& cpu_lda_baseline_kernels() {
  static const std::vector<CpuLdaBaselineKernel> kernels = in_catalog_order(gen::lda_baseline_test_specs());
  return kernels;
}

const std::vector<CpuKernel>& cpu_sample_draws_kernels() {
  static const std::vector<CpuKernel> kernels = in_catalog_order(gen::sample_draws_test_specs());
  return kernels;
}

const CpuKernel* find_cpu_kernel(std::string_view kernel_name) {
  for (const CpuKernel& k : cpu_kernels())
    if (k.name == kernel_name) return &k;
  return nullptr;
}

}  // namespace bfly::test
