// cpu_launcher and cpu_kernel_entry: the CPU side of a kernel's family, written from its argument list.
#include "bfly/emit/cpu_launcher.hpp"

#include "bfly/emit/code_writer.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <fmt/format.h>

namespace bfly::gen {

std::string cpu_launcher(const Source& source, const KernelFamily& f, std::string_view launcher) {
  CodeWriter w;
  w.line("// Runs {} on the CPU; args[i] points at argument i in its parameter's type (gen::PackedArgs).",
         source.kernel_name);
  {
    auto body = w.scope(
        fmt::format("void {}(long long workers, unsigned int grid, unsigned int threads, void** args)", launcher));
  w.line("bfly::lockstep::launch_on(workers > 0 ? workers : bfly::lockstep::default_workers(), {}, dim3(grid), "
         "dim3(threads),",
         source.kernel_name);
  for (std::size_t i = 0; i < f.args.size(); ++i) {
    const KernelArg& arg = f.args[i];
    const std::string type = c_type(arg.type, source.type);
    const std::string value = is_pointer(arg.type)
                                  ? fmt::format("static_cast<{}>(*static_cast<void* const*>(args[{}]))", type, i)
                                  : fmt::format("*static_cast<const {}*>(args[{}])", type, i);
    w.line("    {}{}  // {}", value, i + 1 < f.args.size() ? "," : ");", arg.name);
  }
  }
  return w.text();
}

std::string cpu_kernel_entry(const Source& source, std::string_view launcher) {
  const LaunchGeometry& g = source.geometry;
  return fmt::format(
      "bfly::cpu::CpuKernel{{\"{}\", \"{}\", bfly::gen::LaunchGeometry{{{}, {}, {}, {}, {}, {}, {}, {}, {}}}, &{}}}",
      source.kernel_name, source.family, g.threads_per_cta, g.rows_per_cta, g.chunk_blocks, g.chunks,
      g.theta_in_shared ? "true" : "false", g.static_shared_bytes, g.blocks_in_flight, g.ctas_per_row,
      g.parts_per_row, launcher);
}

}  // namespace bfly::gen
