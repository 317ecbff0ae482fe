// The ahead-of-time header that `bfly-gen generate` writes: one generated kernel, self-contained, plus an inline
// host launch function, for a user's own nvcc build.
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_family.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <string>
#include <string_view>

namespace bfly::gen {

// The SPDX licence identifier on the first line of every ahead-of-time header (bfly's licence, LICENSE).
inline constexpr std::string_view kAotHeaderLicense = "MIT";

// The header text for `spec`: the SPDX line, a usage comment, the kernel with bfly's fragments pasted in (inline_headers), and
// under `#ifdef __CUDACC__` the function
//   cudaError_t <kernel_name>_launch(<the family's parameters>, cudaStream_t stream = 0);
// whose checks follow the arguments' roles and whose grid follows the kernel's geometry. The same spec always gives
// the same bytes.
std::string aot_header(const KernelSpec& spec);

// The same for any kernel of `family` (its source from fill_family_skeleton); `regenerate` is the command the
// header's first lines say to run, `row_stride_minimum` the K its row strides are checked against.
std::string aot_header(const Source& source, const KernelFamily& family, std::string_view regenerate,
                       int row_stride_minimum);

}  // namespace bfly::gen
