// Generated kernels compiled for CPU execution inside bfly-gen: the butterfly table build on symbolic entries
// (the generated code itself, not a formula) and the sample kernel of gen::example_spec().
#pragma once

#include "bfly/cpu/cpu_kernel.hpp"
#include "bfly/error.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/symbolic.hpp"

#include <string>

namespace bfly::tables {

// Runs the generated table kernel for (W, variant) on the CPU; table[i * W + j] receives row i, lane j, and, when
// totals is not null (2 W entries), totals[j] lane j's block total as pass 1's block_total forms it from the same
// weights in the staged loads' order and totals[W + j] the same in row order (gen::permuted_slot_rows 1).
// Throws bfly::Error for a W other than 4, 8, 16, 32.
void run_table_kernel(int W, gen::Variant variant, bfly::Sym* table, bfly::Sym* totals = nullptr);

// The sample kernel of gen::example_spec() (f32), compiled for the CPU (run it with bfly::cpu::run).
const cpu::CpuKernel& example_kernel();

}  // namespace bfly::tables
