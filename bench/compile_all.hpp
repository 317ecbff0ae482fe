// compile_all: the generated kernels of a benchmark sweep, compiled through bfly's kernel cache on all cores
// before anything is timed (bfly-bench and lda-bench), so that loads during the sweep are memory hits.
#pragma once

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"
#include "bfly/jit/compile.hpp"

#include <map>
#include <string>
#include <vector>

namespace bench {

// Compiles `specs` and the LDA baselines `baselines` on `jobs` threads (generation and NVRTC run outside the
// cache's lock); prints one summary line, and one line of resources per kernel when `print_resources`. Returns
// the failures by kernel name.
std::map<std::string, std::string> compile_all(const std::vector<bfly::gen::KernelSpec>& specs,
                                               const std::vector<bfly::gen::LdaBaselineSpec>& baselines,
                                               const bfly::rt::Arch& arch, int jobs, bool print_resources);

// The same without baselines.
std::map<std::string, std::string> compile_all(const std::vector<bfly::gen::KernelSpec>& specs,
                                               const bfly::rt::Arch& arch, int jobs, bool print_resources);

}  // namespace bench
