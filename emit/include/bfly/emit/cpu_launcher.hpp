// The C++ that runs a generated kernel on the CPU: a launcher derived from the kernel's family, which unpacks
// gen::PackedArgs and calls bfly::lockstep::launch_on, and the bfly::cpu::CpuKernel entry that describes it.
// Build-time emitters paste these after the kernel's source (compiled after bfly/lockstep.hpp).
#pragma once

#include "bfly/emit/generate.hpp"

#include <string>
#include <string_view>

namespace bfly::gen {

// `family` is the source's (gen::family(source.family) for bfly's own kernels).
// "void <launcher>(long long workers, unsigned int grid, unsigned int threads, void** args) { ... }"
std::string cpu_launcher(const Source& source, const KernelFamily& family, std::string_view launcher);

// "bfly::cpu::CpuKernel{"<kernel>", "<family>", gen::LaunchGeometry{...}, &<launcher>}"
std::string cpu_kernel_entry(const Source& source, std::string_view launcher);

}  // namespace bfly::gen
