// The draw-test catalog's generated kernels, compiled for the CPU (bfly/lockstep.hpp): look one up by spec and run
// it with the arguments of its family (gen::PackedArgs), exactly as the GPU launch takes them.
#pragma once

#include "bfly/cpu/cpu_kernel.hpp"
#include "bfly/spec/kernel_args.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bfly::test {

// One catalog kernel: its spec, its name and the compiled kernel.
template <typename Spec>
struct CatalogKernel {
  Spec spec;
  std::string name;
  cpu::CpuKernel cpu;
};
using CpuKernel = CatalogKernel<gen::KernelSpec>;               // sample (every form), lda_z, lda_z_doc
using CpuLdaKernel = CatalogKernel<gen::KernelSpec>;            // lda_z, lda_z_doc
using CpuLdaBaselineKernel = CatalogKernel<gen::LdaBaselineSpec>;

// Every spec of gen::draw_test_specs(), gen::lda_test_specs(), gen::lda_baseline_test_specs() and
// gen::sample_draws_test_specs(), in that order.
const std::vector<CpuKernel>& cpu_kernels();
const std::vector<CpuKernel>& cpu_sample_draws_kernels();
const std::vector<CpuLdaKernel>& cpu_lda_kernels();
const std::vector<CpuKernel>& cpu_split_kernels();  // gen::split_test_specs()
const std::vector<CpuKernel>& cpu_small_kernels();  // gen::small_test_specs()
const std::vector<CpuKernel>& cpu_pairs_kernels();  // gen::pairs_test_specs()
const std::vector<CpuLdaBaselineKernel>& cpu_lda_baseline_kernels();

// nullptr when `kernel_name` is not in the sample catalog.
const CpuKernel* find_cpu_kernel(std::string_view kernel_name);

// The row strides besides a test's own at which a kernel is run so that each of its pass-1 paths is tested
// (docs/DESIGN.md section 14). A kernel with staged loads: a multiple of 8 elements, whose rows start on 16 bytes at
// varied places in their 128-byte lines, and a multiple of 64 elements, whose rows all start on a line; a kernel
// staged anywhere takes its staged loads at every ld: K, its rows packed tightly at every place in their lines. A
// kernel that copies its warps' rows (gen::copies_warp_rows) takes the copy at ld = K. None for other kernels.
inline std::vector<long long> pass1_path_strides(const gen::KernelSpec& spec) {
  std::vector<long long> lds;
  if (gen::pass1_stages(spec) > 0 && gen::stages_rows_anywhere(spec))
    lds = {spec.K};
  else if (gen::pass1_stages(spec) > 0)
    lds = {(spec.K + 7) / 8 * 8 + 8, (spec.K + 63) / 64 * 64};
  if (gen::copies_warp_rows(spec) && std::find(lds.begin(), lds.end(), spec.K) == lds.end()) lds.push_back(spec.K);
  return lds;
}

// The scratch of a sample_split kernel (docs/DESIGN.md section 12) for `rows` rows: its part totals in the
// accumulator (gen::part_totals_per_row(spec) per row, poisoned) and its arrival counters (zero, as the kernels
// leave them).
struct SplitScratch {
  std::vector<double> part_totals_f64;  // the accumulator is double for f64, float otherwise
  std::vector<float> part_totals_f32;
  std::vector<unsigned long long> arrivals;
  SplitScratch(const gen::KernelSpec& spec, long long rows) : arrivals(static_cast<std::size_t>(rows), 0ull) {
    const auto size = static_cast<std::size_t>(rows * gen::part_totals_per_row(spec));
    if (spec.type == gen::ElementType::f64) part_totals_f64.assign(size, -1.0);
    else part_totals_f32.assign(size, -1.0f);
  }
  void* part_totals() {
    return part_totals_f64.empty() ? static_cast<void*>(part_totals_f32.data())
                                   : static_cast<void*>(part_totals_f64.data());
  }
};

// Packs `values` for the kernel's family (checked: count, types, row strides >= K, non-null arrays) and runs the
// whole grid on the CPU.
template <typename Spec>
void run_on_cpu(const CatalogKernel<Spec>& kernel, std::initializer_list<gen::ArgValue> values) {
  gen::PackedArgs args(gen::family(kernel.cpu.family), kernel.spec.type, kernel.name, values, kernel.spec.K);
  cpu::run(kernel.cpu, args);
}

}  // namespace bfly::test
