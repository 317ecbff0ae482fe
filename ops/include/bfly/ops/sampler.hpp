// bfly::rt::Sampler: one call draws one category per row on the GPU with a generated, JIT-compiled kernel.
#pragma once

#include "bfly/spec/choose.hpp"
#include "bfly/spec/kernel_args.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <ranges>
#include <span>

struct CUstream_st;  // the same type as cudaStream_t and CUstream

namespace bfly::rt {

// What the caller may force (W, variant, R: anything left empty is chosen by gen::choose_sample_spec) and whether
// to read the invalid rows back.
struct SamplerOptions : gen::SampleChoice {
  bool report_invalid_rows = true;         // read back {count, first row} of rows written as -1
};

struct SampleReport {
  gen::KernelSpec spec;                    // the kernel that ran (with tail_rows, over rows 0 .. M - tail_rows - 1)
  long long invalid_rows = 0;              // rows written as -1 (0 when not reported)
  long long first_invalid_row = -1;        // -1 when none (or not reported)
  // Rows past the row kernel's last whole wave (gen::rows_past_last_wave), drawn by tail_spec (sample_split) in a
  // second launch: rows M - tail_rows .. M - 1. 0 when `spec` drew every row.
  long long tail_rows = 0;
  gen::KernelSpec tail_spec;
  // The second launch overlapped the first one's end (programmatic dependent launch, sm_90 on: docs/DESIGN.md
  // section 16); the call still returns, and the stream still runs what follows, after both have ended.
  bool tail_overlapped = false;
};

// Kernels are generated, compiled (through default_cache()) and loaded on first use of each spec, then kept by
// the Sampler for its lifetime. A Sampler runs in the calling thread's current context, else in the primary
// context of device 0. One Sampler must not be used by several threads at once (it owns the invalid-row
// counters); make one per thread instead.
// The kernel arguments of one sample call with `spec` (what Sampler::sample packs, checks and launches; the
// invalid-row counters are left null, the Sampler sets them once it has a context). Throws bfly::Error as sample()
// does for a bad ld, M or null array.
// A sample_split spec also takes its scratch (part_totals: M * gen::part_totals_per_row(spec) accumulators;
// arrivals: M counters, zero before the first launch; the Sampler keeps both per context) and first_row: the number
// in a larger batch of the launch's row 0, whose uniforms and invalid-row numbers its rows take (weights and out
// then point at that row; 0 for a launch that is the whole batch).
gen::PackedArgs sample_arguments(const gen::KernelSpec& spec, const void* weights, long long M, long long ld,
                                 int* out, std::uint64_t seed, std::uint32_t iteration, void* part_totals = nullptr,
                                 unsigned long long* arrivals = nullptr, long long first_row = 0);

// Several draws per row, from weights or from logits (Sampler::sample_draws, sample_logits).
struct DrawRequest {
  gen::InputKind input = gen::InputKind::weights;
  double temperature = 1.0;  // logits only: the draws follow softmax(logits / temperature); > 0 and finite
  int num_samples = 1;       // draws per row, >= 1: out is M x num_samples, row-major (draw d of row r at r * n + d)
  // true: independent draws from one table per row (num_samples <= gen::kMaxDraws); false: distinct categories,
  // as torch.multinomial(replacement=False), with num_samples <= min(K, gen::kMaxDistinctDraws).
  bool replacement = true;
};

// The spec Sampler::sample_draws uses for M rows (0: unknown): the sampling spec for K and type with the request's
// form. With replacement, rows that gen::choose_sample_spec would split over several CTAs for one draw on a device
// unknown (long rows, or fewer than gen::kSplitBelowRows rows from K = 4096 on: the H100's rule, whatever the device)
// take sample_split's form; the rest the row kernel's.
gen::KernelSpec draws_spec(int K, gen::ElementType type, const DrawRequest& request,
                           const gen::SampleChoice& forced = {}, long long M = 0);

// The kernel arguments of one sample_draws call (checked as sample_draws checks them; counters left null). A
// sample_split spec also takes its scratch, as sample_arguments says.
gen::PackedArgs draws_arguments(const gen::KernelSpec& spec, const void* input, long long M, long long ld,
                                const DrawRequest& request, int* out, std::uint64_t seed, std::uint32_t iteration,
                                void* part_totals = nullptr, unsigned long long* arrivals = nullptr);

// The current context's device as the automatic choice sees it: gen::DeviceBalance from
// current_memory_bytes_per_sm_cycle() (bfly/jit/driver.hpp). Needs a GPU.
gen::DeviceBalance current_device_balance();

// The kernel Sampler::sample launches first for M rows at `weights`, `ld` elements apart, with `forced` (the
// Sampler's options): gen::choose_sample_spec with current_device_balance(), then gen::fit_to_rows. M = 0 launches
// nothing, needs no GPU and gives the spec of a device unknown.
gen::KernelSpec sample_spec_on_device(int K, gen::ElementType type, const gen::SampleChoice& forced, long long M,
                                      const void* weights, long long ld);

class Sampler {
 public:
  explicit Sampler(SamplerOptions options = {});
  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;
  ~Sampler();

  // weights: device array of M rows of K weights with row stride ld >= K; out: device array of M ints.
  // Validates the arguments before any launch (bfly::Error naming the argument): 1 <= K <= KernelSpec::kMaxK,
  // ld >= K, M >= 0, and for M > 0 non-null weights and out. M == 0 does nothing and needs no GPU.
  // With report_invalid_rows the call waits for the stream to read the counters back; without, it only
  // enqueues the launch. The draw for row r
  // depends only on (seed, iteration, r, the weights of row r) and the kernel spec: not on the stream or the launch
  // configuration. The spec is chosen from K, the type, M and the device's balance (sample_spec_on_device): for
  // 3000 <= K < 16384 the row count and the device decide between the row kernel and sample_split, and where the row
  // kernel's grid ends in a small last wave, sample_split draws the rows of that wave (gen::rows_past_last_wave;
  // SampleReport::tail_rows). The two kernels' draws differ only for rows whose u' lies within rounding distance of
  // a boundary; force `operation` for draws that depend on neither M nor the device (one kernel for every row).
  // Calls that use sample_split share the Sampler's scratch, so they must not run on two streams at once.
  // `iteration` is the kernel's `iteration` argument, the last word of the Philox counter: calls with the same
  // seed and weights and different iterations draw with fresh, independent uniforms (draw again from the same
  // weights: iteration 0, 1, 2, ...); the same (seed, iteration) repeats the draws exactly.
  // T is a host type of the element-type table (float, double, bfly::half_bits, bfly::bf16_bits):
  // gen::element_type_of<T>.
  template <typename T>
  SampleReport sample(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                      std::uint32_t iteration = 0, CUstream_st* stream = nullptr) {
    return sample(static_cast<const void*>(weights), gen::element_type_of<T>, M, K, ld, out, seed, iteration, stream);
  }
  // The same with the element type given at run time (for bindings that hold untyped device pointers).
  SampleReport sample(const void* weights, gen::ElementType type, long long M, int K, long long ld, int* out,
                      std::uint64_t seed, std::uint32_t iteration = 0, CUstream_st* stream = nullptr);

  // Host-array convenience: copies weights to the device, samples, copies the draws back (synchronous).
  // weights (a contiguous range of float or double, e.g. std::vector<float>) must hold (M - 1) * ld + K elements
  // and out M ints.
  template <std::ranges::contiguous_range Weights>
  SampleReport sample_host(const Weights& weights, long long M, int K, long long ld, std::span<int> out,
                           std::uint64_t seed, std::uint32_t iteration = 0) {
    using T = std::ranges::range_value_t<Weights>;
    return sample_host(static_cast<const void*>(std::ranges::data(weights)), std::ranges::size(weights),
                       gen::element_type_of<T>, M, K, ld, out, seed, iteration);
  }
  SampleReport sample_host(const void* weights, std::size_t count, gen::ElementType type, long long M, int K,
                           long long ld, std::span<int> out, std::uint64_t seed, std::uint32_t iteration = 0);

  // num_samples draws per row from weights or logits (DrawRequest), into out: device array of M x num_samples ints,
  // row-major. Draw d of row r depends only on (seed, iteration, r, d, row r); draw 0 from weights with
  // replacement is what sample() draws. -1 marks every draw of an invalid row (weights: as sample(); logits: a
  // NaN or +inf, or all -inf) and, without replacement, the draws past a row's positive categories; the report
  // counts the rows with a -1. A -inf logit and a zero weight are never drawn. Throws bfly::Error naming the
  // argument for a temperature that is not positive and finite, num_samples < 1, or above K or
  // gen::kMaxDistinctDraws without replacement (above gen::kMaxDraws with), logits of type f64, and what
  // sample() refuses.
  SampleReport sample_draws(const void* input, gen::ElementType type, long long M, int K, long long ld,
                            const DrawRequest& request, int* out, std::uint64_t seed, std::uint32_t iteration = 0,
                            CUstream_st* stream = nullptr);
  // sample_draws from logits of host type T (float, bfly::half_bits, bfly::bf16_bits).
  template <typename T>
  SampleReport sample_logits(const T* logits, long long M, int K, long long ld, double temperature, int num_samples,
                             bool replacement, int* out, std::uint64_t seed, std::uint32_t iteration = 0,
                             CUstream_st* stream = nullptr) {
    return sample_draws(static_cast<const void*>(logits), gen::element_type_of<T>, M, K, ld,
                        DrawRequest{gen::InputKind::logits, temperature, num_samples, replacement}, out, seed,
                        iteration, stream);
  }
  // Host-array convenience for sample_draws (synchronous): input holds (M - 1) * ld + K elements of `type`, out
  // M * num_samples ints.
  SampleReport sample_draws_host(const void* input, std::size_t count, gen::ElementType type, long long M, int K,
                                 long long ld, const DrawRequest& request, std::span<int> out, std::uint64_t seed,
                                 std::uint32_t iteration = 0);
  template <std::ranges::contiguous_range Input>
  SampleReport sample_draws_host(const Input& input, long long M, int K, long long ld, const DrawRequest& request,
                                 std::span<int> out, std::uint64_t seed, std::uint32_t iteration = 0) {
    using T = std::ranges::range_value_t<Input>;
    return sample_draws_host(static_cast<const void*>(std::ranges::data(input)), std::ranges::size(input),
                             gen::element_type_of<T>, M, K, ld, request, out, seed, iteration);
  }

  // The spec for K, type and M rows (0: unknown) on a device of the given balance (unknown: the H100's rules):
  // gen::choose_sample_spec(K, type, options(), M, device). sample() asks it with current_device_balance().
  gen::KernelSpec spec_for(int K, gen::ElementType type, long long M = 0, gen::DeviceBalance device = {}) const {
    return gen::choose_sample_spec(K, type, options_, M, device);
  }

  const SamplerOptions& options() const { return options_; }

 private:
  struct State;  // loaded kernels and invalid-row counters, per context

  SamplerOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace bfly::rt
