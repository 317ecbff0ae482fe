// Sampler::sample_draws: several draws per row, from weights or from logits with a temperature.
#include "bfly/ops/sampler.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "sampler_state.hpp"

#include <fmt/format.h>

#include <cmath>
#include <tuple>

namespace bfly::rt {
namespace {

constexpr std::string_view kCaller = "Sampler::sample_draws";

// What the kernel cannot check for itself, before anything touches the GPU: K, the temperature and num_samples.
void check_request(int K, gen::ElementType type, const DrawRequest& request) {
  if (K < 1 || K > gen::KernelSpec::kMaxK)
    throw Error(fmt::format("{}: K = {} is out of range; K must be in 1 .. {}", kCaller, K, gen::KernelSpec::kMaxK));
  if (request.input == gen::InputKind::logits) {
    if (!(request.temperature > 0) || !std::isfinite(request.temperature))
      throw Error(fmt::format("{}: temperature = {} is not allowed; the temperature of logits must be positive and "
                              "finite", kCaller, request.temperature));
    if (gen::accumulator_of(type) != gen::ElementType::f32)
      throw Error(fmt::format("{}: logits of type {} are not supported; logits are f32, f16 or bf16", kCaller,
                              gen::name_of(type)));
  }
  if (request.num_samples < 1)
    throw Error(fmt::format("{}: num_samples = {} is not allowed; draw at least 1 category per row", kCaller,
                            request.num_samples));
  if (request.replacement && request.num_samples > gen::kMaxDraws)
    throw Error(fmt::format("{}: num_samples = {} is above the most draws per row, {}", kCaller, request.num_samples,
                            gen::kMaxDraws));
  if (!request.replacement && request.num_samples > K)
    throw Error(fmt::format("{}: num_samples = {} distinct categories (replacement = false) cannot come from K = {} "
                            "categories", kCaller, request.num_samples, K));
  if (!request.replacement && request.num_samples > gen::kMaxDistinctDraws)
    throw Error(fmt::format("{}: num_samples = {} without replacement is above the most distinct draws per row, {} "
                            "(draw with replacement, or in several calls)", kCaller, request.num_samples,
                            gen::kMaxDistinctDraws));
}

}  // namespace

gen::KernelSpec draws_spec(int K, gen::ElementType type, const DrawRequest& request, const gen::SampleChoice& forced,
                           long long M) {
  // Rows that the shape rule splits over several CTAs (gen::rows_split_by_shape, K and M; the caller's split_rows where
  // set) take sample_split's form; every other call takes the row kernel's form (sample_small and sample_pairs draw
  // once from weights only, so 16-bit weights that one draw keeps in pairs are split here as before).
  // A caller that forces an operation without these forms gets validate()'s error.
  gen::SampleChoice choice = forced;
  choice.warp_copies = std::nullopt;  // the forms (logits, several draws) never copy their warps' rows
  choice.ring_anywhere = std::nullopt;  // ... nor stage rows on 16 bytes anywhere
  choice.ring_row_order = std::nullopt;  // ... nor read their ring in row order by a device's rule
  choice.ring_deep = std::nullopt;  // ... nor deepen the ring of odd K over pairs
  if (!choice.operation)
    choice.operation = forced.split_rows.value_or(gen::rows_split_by_shape(K, type, M)) ? gen::Operation::sample_split
                                                                                       : gen::Operation::sample;
  gen::KernelSpec spec = gen::choose_sample_spec(K, type, choice);
  spec.input = request.input;
  spec.draws = request.replacement ? gen::Draws::with_replacement : gen::Draws::without_replacement;
  spec.validate();
  return spec;
}

gen::PackedArgs draws_arguments(const gen::KernelSpec& spec, const void* input, long long M, long long ld,
                                const DrawRequest& request, int* out, std::uint64_t seed, std::uint32_t iteration,
                                void* part_totals, unsigned long long* arrivals) {
  const gen::KernelFamily& family = gen::family_of(spec);
  const bool split = gen::splits_rows(spec.operation);
  if (spec.input == gen::InputKind::logits && split)
    return gen::PackedArgs(family, spec.type, kCaller,
                           {input, M, 0ll, ld, request.temperature, request.num_samples, out, nullptr, part_totals,
                            arrivals, seed, iteration},
                           spec.K);
  if (spec.input == gen::InputKind::logits)
    return gen::PackedArgs(family, spec.type, kCaller,
                           {input, M, ld, request.temperature, request.num_samples, out, nullptr, seed, iteration},
                           spec.K);
  if (split)
    return gen::PackedArgs(family, spec.type, kCaller,
                           {input, M, 0ll, ld, request.num_samples, out, nullptr, part_totals, arrivals, seed,
                            iteration},
                           spec.K);
  return gen::PackedArgs(family, spec.type, kCaller,
                         {input, M, ld, request.num_samples, out, nullptr, seed, iteration}, spec.K);
}

namespace {

// The checks of a sample_draws call that need no GPU (input, M, ld, out, num_samples, temperature): sample_split's
// forms take the row kernel's form's arguments plus their scratch, so that form's packing checks a call before any
// scratch exists (as check_sample_call does for Sampler::sample).
gen::PackedArgs checked_arguments(gen::KernelSpec spec, const void* input, long long M, long long ld,
                                  const DrawRequest& request, int* out, std::uint64_t seed, std::uint32_t iteration) {
  spec.operation = gen::Operation::sample;
  spec.validate();
  return draws_arguments(spec, input, M, ld, request, out, seed, iteration);
}

}  // namespace

SampleReport Sampler::sample_draws(const void* input, gen::ElementType type, long long M, int K, long long ld,
                                   const DrawRequest& request, int* out, std::uint64_t seed, std::uint32_t iteration,
                                   CUstream_st* stream) {
  check_request(K, type, request);
  SampleReport report;
  report.spec = draws_spec(K, type, request, options_, M);
  gen::PackedArgs args = checked_arguments(report.spec, input, M, ld, request, out, seed, iteration);
  if (M == 0) return report;
  if (gen::splits_rows(report.spec.operation)) {
    SplitScratch& scratch = state_->split_scratch[current_context()];
    scratch.reserve_rows(report.spec, M);
    args = draws_arguments(report.spec, input, M, ld, request, out, seed, iteration,
                           reinterpret_cast<void*>(scratch.part_totals.get()),
                           reinterpret_cast<unsigned long long*>(scratch.arrivals.get()));
  }
  std::tie(report.invalid_rows, report.first_invalid_row) =
      state_->kernels.launch(report.spec, args, options_.report_invalid_rows, stream);
  return report;
}

SampleReport Sampler::sample_draws_host(const void* input, std::size_t count, gen::ElementType type, long long M,
                                        int K, long long ld, const DrawRequest& request, std::span<int> out,
                                        std::uint64_t seed, std::uint32_t iteration) {
  check_request(K, type, request);
  checked_arguments(draws_spec(K, type, request, options_, M), input, M, ld, request, out.data(), seed, iteration);
  if (M == 0) return sample_draws(nullptr, type, 0, K, ld, request, nullptr, seed, iteration, nullptr);
  return through_device("Sampler::sample_draws_host", "input", input, count, type, M, K, ld, out,
                        M * request.num_samples, fmt::format("M x num_samples = {} x {}", M, request.num_samples),
                        [&](const void* device_input, int* device_out) {
                          return sample_draws(device_input, type, M, K, ld, request, device_out, seed, iteration,
                                              nullptr);
                        });
}

}  // namespace bfly::rt
