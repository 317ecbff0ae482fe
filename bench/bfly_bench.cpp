// bfly-bench: bfly's generated butterfly samplers side by side with the paper's baselines (Steele & Tristan 2019,
// Algorithms 1 and 4), a warp-per-row sampler and the device's read and copy ceilings, on the same inputs in one
// process (docs/DESIGN.md section 8).
//
// For each element type and K: M = ceil(min_bytes / (K * sizeof(T))) rows, two input buffers of M x K weights
// (so that L2, 50 MB on an H100, cannot serve a run from the previous one), each built from D = 64 distinct random
// rows repeated in a hashed order. Every algorithm first runs once on poisoned outputs and its draws are checked
// (all in [0, K), no zero weight drawn, chi-square per distinct row); then it is timed with CUDA events around
// each launch, after warm-up, alternating the two buffers, and the median is reported as bytes of weights read
// (M * K * sizeof(T)) per second and as a fraction of the read ceiling measured in the same process (the table on
// stdout also gives the median on each buffer).
//
// Output: a table on stdout and <out-dir>/<device>-<date>-sampling.csv (a later run of the day: -2-sampling.csv, -3-,
// and so on, so that no earlier file is replaced) with the columns
//   device,date,algorithm,type,K,M,W,variant,median_ms,gbps,read_ceiling_gbps,fraction_of_read_ceiling,
//   buffer0_ms,buffer1_ms (the medians of the launches on each input buffer; empty for the ceilings)
// plus two rows for the ceilings themselves (algorithm read-ceiling and copy-ceiling; type, K, M empty).
// Exit status: 0 when every check passed, 1 when a check failed (those points are left out of the CSV),
// 2 for a bad command line or a CUDA/bfly error.
#include "baselines.hpp"
#include "draw_check.hpp"

#include "bfly/error.hpp"
#include "bfly/output_file.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/jit/cache.hpp"
#include "compile_all.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using bfly::gen::ElementType;
using bfly::gen::KernelSpec;
using bfly::gen::Variant;
namespace rt = bfly::rt;

// ------------------------------------------------------------------------------------------------ CUDA helpers
void cuda_check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(fmt::format("{} failed: {} ({})", what, cudaGetErrorName(error),
                                         cudaGetErrorString(error)));
  }
}
#define CUDA_CHECK(call) cuda_check((call), #call)

class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes) : bytes_(bytes) { CUDA_CHECK(cudaMalloc(&pointer_, bytes)); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& other) noexcept { swap(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    DeviceMemory gone(std::move(other));
    swap(gone);
    return *this;
  }
  ~DeviceMemory() {
    if (pointer_ != nullptr) cudaFree(pointer_);
  }
  void swap(DeviceMemory& other) noexcept {
    std::swap(pointer_, other.pointer_);
    std::swap(bytes_, other.bytes_);
  }
  template <typename T> T* as() const { return static_cast<T*>(pointer_); }
  std::size_t size() const { return bytes_; }

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

// ------------------------------------------------------------------------------------------------ options
struct Options {
  std::vector<int> Ks = {16, 32, 64, 71, 128, 256, 512, 1000, 1024, 2048, 4096, 4097};
  // Rows per point; empty: M = ceil(min_bytes / (K * sizeof(T))), a GiB of weights. With a list (the LLM shapes:
  // few rows of a large vocabulary), each K runs at each M, every timed run on another slice of the input buffers so
  // that L2 (50 MB on an H100) does not serve the weights.
  std::vector<long long> Ms;
  std::vector<ElementType> types = {ElementType::f32, ElementType::f64};
  std::set<std::string> algorithms;  // empty: all
  std::size_t min_bytes = std::size_t(1) << 30;
  int runs = 30;
  int warmup = 3;
  int distinct_rows = 64;
  int jobs = 0;  // compile threads; 0: hardware concurrency
  std::string out_dir = "bench/results";
  bool compile_only = false;  // compile every bfly spec with NVRTC, print resources and timing; no GPU needed
  bool choices = false;       // print the kernel bfly-auto (and each named auto variant) chooses; no GPU needed
  // What bfly-auto's choice knows of the device: a timed run asks the device; --compile-only and --choices take
  // --balance (unset: unknown, the H100's rules).
  bfly::gen::DeviceBalance device;
  bool balance_given = false;
  std::string arch = "sm_90";  // for --compile-only
  std::uint64_t seed = 20261122;
  // Logits and several draws per row (Sampler::sample_draws), by name (kForms); empty: none.
  std::vector<std::string> forms;
  std::vector<ElementType> form_types = {ElementType::f32, ElementType::bf16, ElementType::f16};
};

// The logits and several-draws rows of the bench: bfly-auto through Sampler::sample_draws, measured in the input's
// own bytes (M x K elements of its type). Logits are log(weights) of the weight rows (-inf for a zero weight), so
// softmax(logits / 1) draws what the weights draw and the same chi-square check applies.
struct Form {
  std::string_view name;  // the CSV's algorithm is "bfly-auto-" + name
  bfly::gen::InputKind input;
  int num_samples;
  bool replacement;
};
constexpr Form kForms[] = {
    {"logits-1", bfly::gen::InputKind::logits, 1, true},
    {"logits-4", bfly::gen::InputKind::logits, 4, true},
    {"logits-distinct-4", bfly::gen::InputKind::logits, 4, false},
    {"draws-4", bfly::gen::InputKind::weights, 4, true},
    {"draws-16", bfly::gen::InputKind::weights, 16, true},
    {"distinct-4", bfly::gen::InputKind::weights, 4, false},
};
// Distinct draws need at least num_samples categories (Sampler refuses fewer, as torch.multinomial does).
bool form_fits(const Form& form, int K) { return form.replacement || form.num_samples <= K; }
const Form& form_named(const std::string& name) {
  for (const Form& form : kForms)
    if (form.name == name) return form;
  throw std::invalid_argument("no bench form " + name);
}

[[noreturn]] void usage(int status) {
  std::printf(
      "usage: bfly-bench [flags]\n"
      "  --K LIST           categories per row, comma-separated (default 16,32,64,71,128,256,512,1000,1024,2048,4096,4097)\n"
      "  --types LIST       f32,f64,bf16,f16 (default f32,f64; the baselines run for f32 and f64 only)\n"
      "  --M LIST           rows per point, comma-separated (default: enough rows for --min-bytes of weights)\n"
      "  --k-range          K = 2 .. 262144 (2,3,5,8,12,16,32,33,...,4096,4097,8192,16384,32000,65536,128256,262144)\n"
      "  --llm              K = 32000,50257,128256,262144 at M = 1,4,16,64,256 (LLM vocabularies; 50257 is odd)\n"
      "  --algorithms LIST  only these (names as in the CSV: bfly-addsub-w32, bfly-auto, bfly-pairs-w16, bfly-split-w32,\n"
      "                     bfly-split-pairs-w32, bfly-small-w32, bfly-pairs-w32-r31 (K <= 62 only), alg1,\n"
      "                     alg1-two-pass, alg4-regs, alg4-smem, warp-per-row); default all; only when named:\n"
      "                     bfly-auto-r0 (bfly-auto with R = 0 forced, the device's other rules kept),\n"
      "                     bfly-auto-nocopy (the warps' copies off), bfly-auto-nocopy-r0 (both),\n"
      "                     bfly-auto-swap, bfly-auto-addsub (the variant), bfly-auto-anywhere, bfly-auto-noanywhere\n"
      "                     (the ring's rows staged anywhere or not), bfly-auto-roworder, bfly-auto-noroworder,\n"
      "                     bfly-auto-rows, bfly-auto-split (the row kernel or sample_split whatever K and M),\n"
      "                     bfly-auto-deep, bfly-auto-nodeep (the deep ring for odd K over pairs of 8-15 lines)\n"
      "  --min-bytes N      bytes of weights per input buffer, at least (default 1073741824 = 1 GiB)\n"
      "  --runs N           timed runs per point, median reported (default 30)\n"
      "  --warmup N         untimed runs first (default 3)\n"
      "  --jobs N           NVRTC compile threads (default: all cores)\n"
      "  --out-dir DIR      where the CSV goes (default bench/results; never over an earlier run's file)\n"
      "  --compile-only     compile every bfly spec of the sweep (no GPU needed) and print resources and timing\n"
      "  --arch A           target of --compile-only (default sm_90)\n"
      "  --choices          print the kernel bfly-auto and each named bfly-auto-* variant choose at each type, K and\n"
      "                     M of the sweep, one line each (type K M algorithm kernel); no GPU, nothing compiled\n"
      "  --balance B        the device balance that --compile-only and --choices assume: memory bytes an SM and\n"
      "                     cycle (an H100 12.8, an H200 18.4; default unknown, the H100's rules)\n"
      "  --forms LIST       also logits and several draws per row: all, or logits-1, logits-4, logits-distinct-4\n"
      "                     (logits in --form-types), draws-4, draws-16, distinct-4 (weights in --types); default none\n"
      "  --form-types LIST  types of the logits forms (default f32,bf16,f16)\n");
  std::exit(status);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(',', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) parts.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bfly-bench: %s needs a value\n", flag.c_str());
        usage(2);
      }
      return argv[++i];
    };
    try {
      if (flag == "--K") {
        o.Ks.clear();
        for (const auto& k : split(value())) o.Ks.push_back(std::stoi(k));
      } else if (flag == "--M") {
        o.Ms.clear();
        for (const std::string& m : split(value())) o.Ms.push_back(std::stoll(m));
      } else if (flag == "--k-range") {
        // Odd K besides 71 and 4097 since 2026-11-27 (16-bit rows of odd K pair up by their phase).
        o.Ks = {2, 3, 5, 8, 12, 16, 32, 33, 64, 71, 128, 255, 256, 512, 1000, 1001, 1024, 2047, 2048, 3001, 4096, 4097,
                8192, 16384, 32000, 65536, 128256, 262144};
      } else if (flag == "--llm") {
        o.Ks = {32000, 50257, 128256, 262144};
        o.Ms = {1, 4, 16, 64, 256};
      } else if (flag == "--types") {
        o.types.clear();
        for (const auto& t : split(value())) o.types.push_back(bfly::gen::parse_element_type(t));
      } else if (flag == "--algorithms") {
        for (const auto& a : split(value())) o.algorithms.insert(a);
      } else if (flag == "--min-bytes") {
        o.min_bytes = std::stoull(value());
      } else if (flag == "--runs") {
        o.runs = std::stoi(value());
      } else if (flag == "--warmup") {
        o.warmup = std::stoi(value());
      } else if (flag == "--jobs") {
        o.jobs = std::stoi(value());
      } else if (flag == "--out-dir") {
        o.out_dir = value();
      } else if (flag == "--compile-only") {
        o.compile_only = true;
      } else if (flag == "--arch") {
        o.arch = value();
      } else if (flag == "--choices") {
        o.choices = true;
      } else if (flag == "--balance") {
        o.device.memory_bytes_per_sm_cycle = std::stod(value());
        o.balance_given = true;
      } else if (flag == "--forms") {
        o.forms.clear();
        for (const auto& f : split(value())) {
          if (f == "all") {
            for (const Form& form : kForms) o.forms.emplace_back(form.name);
          } else {
            o.forms.push_back(std::string(form_named(f).name));
          }
        }
      } else if (flag == "--form-types") {
        o.form_types.clear();
        for (const auto& t : split(value())) o.form_types.push_back(bfly::gen::parse_element_type(t));
      } else if (flag == "-h" || flag == "--help") {
        usage(0);
      } else {
        std::fprintf(stderr, "bfly-bench: unknown flag %s\n", flag.c_str());
        usage(2);
      }
    } catch (const std::logic_error&) {  // stoi and friends, an unknown form
      std::fprintf(stderr, "bfly-bench: bad value for %s\n", flag.c_str());
      usage(2);
    }
  }
  for (int K : o.Ks) {
    if (K < 1 || K > KernelSpec::kMaxK) {
      std::fprintf(stderr, "bfly-bench: K = %d outside [1, %d]\n", K, KernelSpec::kMaxK);
      usage(2);
    }
  }
  if (o.runs < 1 || o.warmup < 0 || o.min_bytes < 16 || o.Ks.empty() || o.types.empty()) usage(2);
  if (o.balance_given && !(o.device.memory_bytes_per_sm_cycle >= 0)) {
    std::fprintf(stderr, "bfly-bench: --balance must be 0 or more bytes an SM and cycle\n");
    usage(2);
  }
  if (o.balance_given && !o.compile_only && !o.choices) {
    std::fprintf(stderr, "bfly-bench: --balance goes with --compile-only or --choices (a timed run asks the device)\n");
    usage(2);
  }
  return o;
}

// ------------------------------------------------------------------------------------------------ the sweep
// bfly specs measured at each K: both variants x W in {8, 16, 32}, R = min(8, W - 1).
constexpr int kWidths[] = {8, 16, 32};
constexpr Variant kVariants[] = {Variant::swap, Variant::addsub};

KernelSpec bfly_spec(int K, ElementType type, Variant variant, int W) {
  KernelSpec spec;
  spec.W = W;
  spec.K = K;
  spec.R = std::min(8, W - 1);
  spec.type = type;
  spec.variant = variant;
  spec.operation = bfly::gen::Operation::sample;
  spec.validate();
  return spec;
}

std::string bfly_name(Variant variant, int W) {
  return fmt::format("bfly-{}-w{}", bfly::gen::name_of(variant), W);
}

// sample_pairs: the row kernel over pairs of adjacent weights (docs/DESIGN.md section 13) with the automatic
// choice's variant: bfly-pairs-w16 and -w32 with its R, bfly-pairs-w16-r0 with every remnant padded to a block,
// bfly-pairs-w16-r8 with remnants of up to 8 columns searched linearly (the row kernel's R). Odd K too.
// bfly-pairs-w16-r15 and -w32-r31 only where the whole row is their remnant (K <= 2R: each lane keeps its row in
// registers, loaded 8 or 16 bytes at a time), the short rows' candidates.
struct PairsKernel {
  int W;
  std::optional<int> R;
  bool whole_rows_only = false;
};
constexpr PairsKernel kPairsKernels[] = {{16, std::nullopt}, {32, std::nullopt}, {16, 0},
                                         {16, 8},            {16, 15, true},      {32, 31, true}};
bool measured_at(const PairsKernel& kernel, int K) { return !kernel.whole_rows_only || K <= 2 * *kernel.R; }
KernelSpec pairs_spec(int K, ElementType type, const PairsKernel& kernel) {
  bfly::gen::SampleChoice forced;
  forced.W = kernel.W;
  forced.R = kernel.R;
  forced.operation = bfly::gen::Operation::sample_pairs;
  return bfly::gen::choose_sample_spec(K, type, forced);
}
std::string pairs_name(const PairsKernel& kernel) {
  return fmt::format("bfly-pairs-w{}{}", kernel.W, kernel.R ? fmt::format("-r{}", *kernel.R) : "");
}

// The kernels for the ends of the K range (docs/DESIGN.md section 12), measured at every K where they apply:
// bfly-split-w32 (one row over several CTAs) and bfly-split-pairs-w32 (the same over pairs of weights) at every K,
// bfly-small-w32 (several short rows per lane) for K <= 32.
KernelSpec range_spec(bfly::gen::Operation operation, int K, ElementType type) {
  KernelSpec spec;
  spec.W = 32;
  spec.K = K;
  spec.R = 0;
  spec.type = type;
  spec.variant = bfly::gen::splits_rows(operation) && type == ElementType::f64 ? Variant::swap : Variant::addsub;
  spec.operation = operation;
  spec.validate();
  return spec;
}

bool wanted(const Options& o, const std::string& algorithm) {
  return o.algorithms.empty() || o.algorithms.count(algorithm) != 0;
}

rt::SamplerOptions auto_options() {
  rt::SamplerOptions options;
  options.report_invalid_rows = false;  // time the launch alone, as a caller that does not read counters back
  return options;
}
// bfly-auto with one of the device's rules forced and the others kept, through the same Sampler path (a rule's A/B on
// the device; timed only when named): -r0 R = 0 (a remnant the rule's R sums linearly padded to a whole block instead),
// -nocopy without the warps' copies (KernelSpec::warp_copies = false: the ring or the register loads), -nocopy-r0 both;
// -swap and -addsub the butterfly variant; -anywhere and -noanywhere the ring staged as rows that start anywhere or
// not (KernelSpec::ring_anywhere, where the ring applies); -roworder and -noroworder a tile's rows read in row order
// or permuted (KernelSpec::ring_row_order, where the ring reads rows staged anywhere); -rows and -split the row kernel
// or sample_split whatever K and M (SampleChoice::split_rows: a row kernel against a split in one process); -deep and
// -nodeep the deep ring or not for rows over pairs at odd K of 8-15 lines of blocks (KernelSpec::ring_deep).
struct AutoVariant {
  std::string_view name;
  std::optional<int> R;
  std::optional<bool> warp_copies;
  std::optional<Variant> variant;
  std::optional<bool> ring_anywhere;
  std::optional<bool> ring_row_order;
  std::optional<bool> split_rows = std::nullopt;
  std::optional<bool> ring_deep = std::nullopt;
};
const AutoVariant kAutoVariants[] = {
    {"bfly-auto-r0", 0, {}, {}, {}, {}},
    {"bfly-auto-nocopy", {}, false, {}, {}, {}},
    {"bfly-auto-nocopy-r0", 0, false, {}, {}, {}},
    {"bfly-auto-swap", {}, {}, Variant::swap, {}, {}},
    {"bfly-auto-addsub", {}, {}, Variant::addsub, {}, {}},
    {"bfly-auto-anywhere", {}, {}, {}, true, {}},
    {"bfly-auto-noanywhere", {}, {}, {}, false, {}},
    {"bfly-auto-roworder", {}, {}, {}, {}, true},
    {"bfly-auto-noroworder", {}, {}, {}, {}, false},
    {"bfly-auto-rows", {}, {}, {}, {}, {}, false},
    {"bfly-auto-split", {}, {}, {}, {}, {}, true},
    {"bfly-auto-deep", {}, {}, {}, {}, {}, {}, true},
    {"bfly-auto-nodeep", {}, {}, {}, {}, {}, {}, false}};
rt::SamplerOptions auto_variant_options(const AutoVariant& variant) {
  rt::SamplerOptions options = auto_options();
  options.R = variant.R;
  options.warp_copies = variant.warp_copies;
  options.variant = variant.variant;
  options.ring_anywhere = variant.ring_anywhere;
  options.ring_row_order = variant.ring_row_order;
  options.split_rows = variant.split_rows;
  options.ring_deep = variant.ring_deep;
  return options;
}

// The rows of the points at K: o.Ms, else enough rows for o.min_bytes of weights.
std::vector<long long> rows_at(const Options& o, int K, std::size_t element_size) {
  if (!o.Ms.empty()) return o.Ms;
  return {static_cast<long long>((o.min_bytes + K * element_size - 1) / (K * element_size))};
}

// The kernels bfly-auto and each named auto variant choose at K and type, at each M of the sweep:
// f(M, algorithm, spec).
template <typename F>
void for_each_auto_choice(const Options& o, int K, ElementType type, F&& f) {
  for (long long M : rows_at(o, K, bfly::gen::size_of(type))) {
    if (wanted(o, "bfly-auto")) f(M, "bfly-auto", bfly::gen::choose_sample_spec(K, type, auto_options(), M, o.device));
    for (const AutoVariant& variant : kAutoVariants)
      if (o.algorithms.count(std::string(variant.name)))
        f(M, variant.name, bfly::gen::choose_sample_spec(K, type, auto_variant_options(variant), M, o.device));
  }
}

// Every distinct bfly spec of the sweep, the automatic choice included.
std::vector<KernelSpec> sweep_specs(const Options& o) {
  std::vector<KernelSpec> specs;
  std::set<std::string> seen;
  const auto add = [&](const KernelSpec& spec) {
    if (seen.insert(bfly::gen::kernel_name(spec)).second) specs.push_back(spec);
  };
  for (ElementType type : o.types) {
    for (int K : o.Ks) {
      for (Variant variant : kVariants)
        for (int W : kWidths)
          if (wanted(o, bfly_name(variant, W))) add(bfly_spec(K, type, variant, W));
      for (const PairsKernel& kernel : kPairsKernels)
        if (wanted(o, pairs_name(kernel)) && measured_at(kernel, K)) add(pairs_spec(K, type, kernel));
      if (wanted(o, "bfly-split-w32")) add(range_spec(bfly::gen::Operation::sample_split, K, type));
      if (wanted(o, "bfly-split-pairs-w32")) add(range_spec(bfly::gen::Operation::sample_split_pairs, K, type));
      if (wanted(o, "bfly-small-w32") && K <= KernelSpec::kMaxSmallK)
        add(range_spec(bfly::gen::Operation::sample_small, K, type));
      for_each_auto_choice(o, K, type, [&](long long, std::string_view, const KernelSpec& spec) { add(spec); });
    }
  }
  for (const std::string& name : o.forms) {  // logits and several draws: the specs Sampler::sample_draws picks
    const Form& form = form_named(name);
    const rt::DrawRequest request{form.input, 1.0, form.num_samples, form.replacement};
    for (ElementType type : form.input == bfly::gen::InputKind::logits ? o.form_types : o.types)
      for (int K : o.Ks)
        for (long long M : rows_at(o, K, bfly::gen::size_of(type)))
          if (form_fits(form, K)) add(rt::draws_spec(K, type, request, auto_options(), M));
  }
  return specs;
}

// ------------------------------------------------------------------------------------------------ inputs
// D distinct rows of K weights for one buffer. Rows 0-2 put all weight on one category (last, first, middle),
// row 3 is uniform, row 4 has its first half zero; the rest are random with a heavy tail, about one weight in
// eight exactly zero, and a per-row scale from 1e-3 to 1e3. Never all zero.
std::vector<double> make_distinct_rows(int D, int K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> rows(static_cast<std::size_t>(D) * K, 0.0);
  for (int d = 0; d < D; ++d) {
    double* w = &rows[static_cast<std::size_t>(d) * K];
    if (d == 0) {
      w[K - 1] = 1.0;
    } else if (d == 1) {
      w[0] = 2.5;
    } else if (d == 2) {
      w[K / 2] = 0.75;
    } else if (d == 3) {
      std::fill(w, w + K, 1.0);
    } else {
      const double scale = std::pow(10.0, -3.0 + 6.0 * unit(rng));
      bool any = false;
      for (int k = 0; k < K; ++k) {
        const double u = unit(rng);
        if ((d == 4 && k < K / 2) || unit(rng) < 0.125) continue;
        const double e = -std::log(1.0 - u);  // exponential(1)
        w[k] = scale * (0.01 + e * e);        // squared: heavier tail than the exponential
        any = true;
      }
      if (!any) w[K - 1] = scale;
    }
  }
  return rows;
}

// ------------------------------------------------------------------------------------------------ timing
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The median of a point's timed launches, and the medians of the launches on each input buffer (even and odd
// iterations): where the two differ, the kernel's speed depends on where its input lies in memory.
struct Timing {
  double median_ms = 0.0;
  double buffer_ms[2] = {0.0, 0.0};
};

// Median of `runs` launches, each between its own pair of events, after `warmup` untimed launches.
// launch(i) runs iteration i (callers alternate their input buffers on i).
Timing time_launches(const std::function<void(int)>& launch, int warmup, int runs, cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) launch(i);
  std::vector<cudaEvent_t> starts(runs), stops(runs);
  for (int i = 0; i < runs; ++i) {
    CUDA_CHECK(cudaEventCreate(&starts[i]));
    CUDA_CHECK(cudaEventCreate(&stops[i]));
  }
  for (int i = 0; i < runs; ++i) {
    CUDA_CHECK(cudaEventRecord(starts[i], stream));
    launch(warmup + i);
    CUDA_CHECK(cudaEventRecord(stops[i], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms(runs);
  for (int i = 0; i < runs; ++i) {
    float t = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&t, starts[i], stops[i]));
    ms[i] = t;
    CUDA_CHECK(cudaEventDestroy(starts[i]));
    CUDA_CHECK(cudaEventDestroy(stops[i]));
  }
  Timing timing;
  timing.median_ms = median(ms);
  for (int buffer = 0; buffer < 2; ++buffer) {
    std::vector<double> on_buffer;
    for (int i = 0; i < runs; ++i)
      if ((warmup + i) % 2 == buffer) on_buffer.push_back(ms[i]);
    if (!on_buffer.empty()) timing.buffer_ms[buffer] = median(on_buffer);
  }
  return timing;
}
double time_median_ms(const std::function<void(int)>& launch, int warmup, int runs, cudaStream_t stream) {
  return time_launches(launch, warmup, runs, stream).median_ms;
}

// ------------------------------------------------------------------------------------------------ results
struct Row {
  std::string algorithm;
  std::string type;  // "" for the ceilings
  int K = 0;         // 0 for the ceilings
  long long M = 0;
  int W = 0;         // 0: not applicable
  std::string variant;
  double median_ms = 0.0;
  double gbps = 0.0;
  double buffer_ms[2] = {0.0, 0.0};  // the medians on each input buffer (0: not measured, the ceilings)
};

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof(text), "%Y-%m-%d", std::localtime(&now));
  return text;
}

// "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3"
std::string device_slug(std::string name) {
  std::string slug;
  for (char c : name) {
    const bool alnum = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (alnum) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  if (slug.rfind("nvidia-", 0) == 0) slug = slug.substr(7);
  return slug.empty() ? "gpu" : slug;
}

std::string csv_field(const std::string& text) {
  std::string out = text;
  std::replace(out.begin(), out.end(), ',', ' ');
  return out;
}

// ------------------------------------------------------------------------------------------------ the bench
struct Buffers {
  DeviceMemory input[2];
  DeviceMemory scratch;  // the p table of alg1 and alg4 (M * K elements)
  DeviceMemory out;
  DeviceMemory distinct;
  DeviceMemory sink;
};

struct Ceilings {
  double read_gbps = 0.0, read_ms = 0.0;
  double copy_gbps = 0.0, copy_ms = 0.0;
};

class Bench {
 public:
  Bench(const Options& options, const cudaDeviceProp& prop, cudaStream_t stream)
      : o_(options), prop_(prop), stream_(stream), sampler_(auto_options()) {
    for (const AutoVariant& variant : kAutoVariants) variant_samplers_.emplace_back(auto_variant_options(variant));
  }

  void allocate(std::size_t input_bytes, std::size_t out_bytes, bool need_scratch, int max_K) {
    input_bytes_ = input_bytes;
    for (auto& buffer : b_.input) buffer = DeviceMemory(input_bytes);
    if (need_scratch) b_.scratch = DeviceMemory(input_bytes);
    b_.out = DeviceMemory(out_bytes);
    b_.distinct = DeviceMemory(static_cast<std::size_t>(o_.distinct_rows) * std::max(max_K, 1024) * sizeof(double));
    b_.sink = DeviceMemory(sizeof(float) * bench::read_ceiling_sink_size(prop_.multiProcessorCount, 8));
    // Fill both buffers with real data before anything reads them (never time on zeros or garbage).
    const int K = 1024;
    const long long M = static_cast<long long>(input_bytes / (K * sizeof(float)));
    for (int i = 0; i < 2; ++i) fill<float>(i, M, K, o_.seed + 1000 + i);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The read ceiling (grid-stride float4 read-and-reduce, 8 x 512 threads per SM) over o_.min_bytes of each buffer
  // in turn, and the copy ceiling (cudaMemcpyAsync device to device, bytes read + written).
  Ceilings measure_ceilings() {
    Ceilings c;
    const std::size_t bytes = o_.min_bytes / 16 * 16;
    c.read_ms = time_median_ms(
        [&](int i) {
          bench::read_ceiling(b_.input[i % 2].as<void>(), bytes, b_.sink.as<float>(), prop_.multiProcessorCount, 8,
                              stream_);
        },
        o_.warmup, o_.runs, stream_);
    c.read_gbps = static_cast<double>(bytes) / (c.read_ms * 1e6);
    const std::size_t copy_bytes = bytes / 2;  // within one buffer: first half -> second half, then back
    c.copy_ms = time_median_ms(
        [&](int i) {
          char* base = b_.input[i % 2].as<char>();
          char* from = base + (i / 2 % 2 ? copy_bytes : 0);
          char* to = base + (i / 2 % 2 ? 0 : copy_bytes);
          CUDA_CHECK(cudaMemcpyAsync(to, from, copy_bytes, cudaMemcpyDeviceToDevice, stream_));
        },
        o_.warmup, o_.runs, stream_);
    c.copy_gbps = 2.0 * static_cast<double>(copy_bytes) / (c.copy_ms * 1e6);
    return c;
  }

  // One (type, K, M) point: every wanted algorithm checked, then timed. T is the host type of the weights (float,
  // double, or the 16-bit storage of f16 and bf16); the paper's baselines and warp-per-row exist for float and
  // double.
  template <typename T>
  void run_point(int K, long long M, std::vector<Row>& rows, std::vector<std::string>& failures) {
    const ElementType type = bfly::gen::element_type_of<T>;
    constexpr bool baselines = std::is_same_v<T, float> || std::is_same_v<T, double>;
    const std::string type_name(bfly::gen::name_of(type));
    const long long ld = K;
    const double bytes = static_cast<double>(M) * K * sizeof(T);
    const int D = o_.distinct_rows;
    const long long slices = slices_for(K, M, sizeof(T));

    // Inputs: buffer 0 is checked against its distinct rows (slice 0); buffer 1 holds other random rows.
    std::vector<double> distinct0;
    for (int i = 0; i < 2; ++i) {
      const std::uint64_t seed = o_.seed + 7919ull * K + 104729ull * sizeof(T) + i;
      std::vector<double> distinct;
      if constexpr (baselines) distinct = fill<T>(i, M * slices, K, seed);
      else distinct = fill_form(i, M * slices, K, type, false, seed);
      if (i == 0) distinct0 = std::move(distinct);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));

    int* const out = b_.out.as<int>();
    T* const scratch = b_.scratch.as<T>();
    const auto weights = [this, M, ld, slices](int i) {
      return b_.input[i % 2].as<const T>() + (i / 2) % slices * M * ld;
    };
    const auto slot = [slices](int i) { return static_cast<std::size_t>((i / 2) % slices * 2 + i % 2); };
    const std::uint64_t seed = o_.seed;

    struct Candidate {
      std::string algorithm;
      int W = 0;
      std::string variant;
      std::function<void(int)> launch;  // launch(i): one sampling of buffer i % 2 into out
    };
    std::vector<Candidate> candidates;

    // bfly's generated kernels, loaded through the runtime (compiled earlier into the kernel cache); a kernel that
    // does not load is a failure of its point, and null.
    const auto load = [&](const KernelSpec& spec, const std::string& name) -> std::shared_ptr<rt::Kernel> {
      try {
        return std::make_shared<rt::Kernel>(rt::load_kernel(spec));
      } catch (const std::exception& e) {
        failures.push_back(fmt::format("{} {} K={}: {}", name, type_name, K, e.what()));
        return nullptr;
      }
    };
    // A kernel with the row kernel's arguments (sample, sample_pairs).
    const auto add_row_kernel = [&](const KernelSpec& spec, const std::string& name) {
      const std::shared_ptr<rt::Kernel> kernel = load(spec, name);
      if (!kernel) return;
      // The arguments of both input buffers, packed once (no invalid-row counters), so that the timed lambda
      // only launches.
      auto packed = std::make_shared<std::vector<bfly::gen::PackedArgs>>();
      for (int i = 0; i < 2 * slices; ++i)  // packed[slot(i)] holds the arguments of timed run i
        packed->emplace_back(bfly::gen::family_of(spec), spec.type, "bfly-bench",
                             std::initializer_list<bfly::gen::ArgValue>{weights(i), M, ld, out, nullptr, seed, 0u}, K);
      candidates.push_back({name, spec.W, std::string(bfly::gen::name_of(spec.variant)), [=, this](int i) {
                              rt::launch(*kernel, (*packed)[slot(i)], reinterpret_cast<CUstream>(stream_));
                            }});
    };
    for (Variant variant : kVariants)
      for (int W : kWidths)
        if (wanted(o_, bfly_name(variant, W))) add_row_kernel(bfly_spec(K, type, variant, W), bfly_name(variant, W));
    for (const PairsKernel& kernel : kPairsKernels)
      if (wanted(o_, pairs_name(kernel)) && measured_at(kernel, K))
        add_row_kernel(pairs_spec(K, type, kernel), pairs_name(kernel));
    // The kernels for the ends of the K range; sample_split's scratch is the bench's, its counters left at zero.
    for (const auto& [operation, name] : {std::pair{bfly::gen::Operation::sample_split, "bfly-split-w32"},
                                          std::pair{bfly::gen::Operation::sample_split_pairs, "bfly-split-pairs-w32"},
                                          std::pair{bfly::gen::Operation::sample_small, "bfly-small-w32"}}) {
      if (!wanted(o_, name) || (operation == bfly::gen::Operation::sample_small && K > KernelSpec::kMaxSmallK)) continue;
      const KernelSpec spec = range_spec(operation, K, type);
      const std::shared_ptr<rt::Kernel> kernel = load(spec, name);
      if (!kernel) continue;
      const bool split = bfly::gen::splits_rows(operation);
      if (split) reserve_split_scratch(M * bfly::gen::launch_geometry(spec).parts_per_row * sizeof(double), M);
      auto packed = std::make_shared<std::vector<bfly::gen::PackedArgs>>();
      for (int i = 0; i < 2 * slices; ++i) {
        if (split)
          packed->emplace_back(bfly::gen::family_of(spec), spec.type, "bfly-bench",
                               std::initializer_list<bfly::gen::ArgValue>{
                                   weights(i), M, 0ll, ld, out, nullptr, split_parts_.as<void>(),
                                   split_arrivals_.as<unsigned long long>(), seed, 0u},
                               K);
        else
          packed->emplace_back(bfly::gen::family_of(spec), spec.type, "bfly-bench",
                               std::initializer_list<bfly::gen::ArgValue>{weights(i), M, ld, out, nullptr, seed, 0u},
                               K);
      }
      candidates.push_back({name, 32, std::string(bfly::gen::name_of(spec.variant)), [=, this](int i) {
                              rt::launch(*kernel, (*packed)[slot(i)], reinterpret_cast<CUstream>(stream_));
                            }});
    }
    if (wanted(o_, "bfly-auto")) {
      const KernelSpec chosen = bfly::gen::choose_sample_spec(K, type, auto_options(), M, o_.device);
      fmt::print("  bfly-auto chooses {}\n", bfly::gen::kernel_name(chosen));
      candidates.push_back({"bfly-auto", 0, "", [=, this](int i) {
                              sampler_.sample(weights(i), M, K, ld, out, seed, 0, stream_);
                            }});
    }
    for (std::size_t v = 0; v < std::size(kAutoVariants); ++v) {
      const std::string name(kAutoVariants[v].name);
      if (!o_.algorithms.count(name)) continue;
      const KernelSpec chosen =
          bfly::gen::choose_sample_spec(K, type, auto_variant_options(kAutoVariants[v]), M, o_.device);
      fmt::print("  {} chooses {}\n", name, bfly::gen::kernel_name(chosen));
      candidates.push_back({name, 0, "", [=, this](int i) {
                              variant_samplers_[v].sample(weights(i), M, K, ld, out, seed, 0, stream_);
                            }});
    }
    // The paper's baselines and the warp-per-row sampler (f32 and f64 only).
    if constexpr (baselines) {
      if (wanted(o_, "alg1"))
        candidates.push_back({"alg1", 0, "",
                              [=, this](int i) { bench::alg1(weights(i), M, K, ld, out, scratch, seed, stream_); }});
      if (wanted(o_, "alg1-two-pass"))
        candidates.push_back({"alg1-two-pass", 0, "",
                              [=, this](int i) { bench::alg1_two_pass(weights(i), M, K, ld, out, seed, stream_); }});
      if (wanted(o_, "alg4-regs"))
        candidates.push_back({"alg4-regs", 32, "",
                              [=, this](int i) {
                                bench::alg4_regs(weights(i), M, K, ld, out, scratch, seed, stream_);
                              }});
      if (wanted(o_, "alg4-smem"))
        candidates.push_back({"alg4-smem", 32, "",
                              [=, this](int i) {
                                bench::alg4_smem(weights(i), M, K, ld, out, scratch, seed, stream_);
                              }});
      if (wanted(o_, "warp-per-row"))
        candidates.push_back({"warp-per-row", 0, "",
                              [=, this](int i) { bench::warp_per_row(weights(i), M, K, ld, out, seed, stream_); }});
    }

    std::vector<int> draws(static_cast<std::size_t>(M));
    for (const Candidate& c : candidates) {
      try {
        // Check: poisoned outputs, one sampling of buffer 0, every draw checked against the weights.
        CUDA_CHECK(cudaMemsetAsync(out, 0xFE, static_cast<std::size_t>(M) * sizeof(int), stream_));
        c.launch(0);
        CUDA_CHECK(cudaMemcpyAsync(draws.data(), out, draws.size() * sizeof(int), cudaMemcpyDeviceToHost, stream_));
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        const bench::DrawCheck check = bench::check_draws(
            draws, M, K, distinct0, D, [D](long long r) { return bench::distinct_index(r, D); });
        if (!check.ok) {
          failures.push_back(fmt::format("{} {} K={}: {}", c.algorithm, type_name, K, check.problem));
          fmt::print("  FAIL {:<16} {}\n", c.algorithm, check.problem);
          continue;
        }
        const Timing timing = time_launches(c.launch, o_.warmup, o_.runs, stream_);
        const double ms = timing.median_ms;
        Row row{c.algorithm, type_name, K, M, c.W, c.variant, ms, bytes / (ms * 1e6), {timing.buffer_ms[0],
                                                                                      timing.buffer_ms[1]}};
        fmt::print("  {:<16} {:>9.4f} ms {:>8.1f} GB/s {:>6.3f} of read   chi-square p {:.2g} (rows: min p x {} = "
                   "{:.2g})   buffers {:.4f} / {:.4f} ms\n",
                   c.algorithm, ms, row.gbps, row.gbps / read_ceiling_gbps_, check.p_combined, D, check.p_min_row,
                   timing.buffer_ms[0], timing.buffer_ms[1]);
        rows.push_back(std::move(row));
      } catch (const std::exception& e) {
        failures.push_back(fmt::format("{} {} K={}: {}", c.algorithm, type_name, K, e.what()));
        fmt::print("  ERROR {:<16} {}\n", c.algorithm, e.what());
        // A sticky CUDA error (illegal address) poisons the context: stop rather than report nonsense.
        const cudaError_t sticky = cudaDeviceSynchronize();
        if (sticky != cudaSuccess) throw;
      }
    }
  }

  // One form (logits, several draws) at one K and type: bfly-auto through Sampler::sample_draws, checked (range,
  // zero weights, chi-square of every draw with replacement or of draw 0 without; distinct draws without), then
  // timed. Bytes: the input's own, M x K elements of `type`.
  void run_form_point(const Form& form, ElementType type, int K, long long M, std::vector<Row>& rows,
                      std::vector<std::string>& failures) {
    const std::string type_name(bfly::gen::name_of(type));
    const std::string algorithm = "bfly-auto-" + std::string(form.name);
    const std::size_t size = static_cast<std::size_t>(bfly::gen::size_of(type));
    const int n = form.num_samples;
    const double bytes = static_cast<double>(M) * K * size;
    const int D = o_.distinct_rows;
    const bool logits = form.input == bfly::gen::InputKind::logits;
    const long long slices = slices_for(K, M, size);  // timed run i reads slice (i / 2) % slices of buffer i % 2
    std::vector<double> distinct0;
    for (int i = 0; i < 2; ++i) {
      std::vector<double> distinct =
          fill_form(i, M * slices, K, type, logits, o_.seed + 7919ull * K + 104729ull * size + i);
      if (i == 0) distinct0 = std::move(distinct);
    }
    int* const out = b_.out.as<int>();
    const rt::DrawRequest request{form.input, 1.0, n, form.replacement};
    const auto launch = [&](int i) {
      const auto* input = b_.input[i % 2].as<const unsigned char>() + (i / 2) % slices * M * K * size;
      sampler_.sample_draws(input, type, M, K, K, request, out, o_.seed, 0, stream_);
    };
    try {
      fmt::print("  {} chooses {}\n", algorithm,
                 bfly::gen::kernel_name(rt::draws_spec(K, type, request, auto_options(), M)));
      CUDA_CHECK(cudaMemsetAsync(out, 0xFE, static_cast<std::size_t>(M) * n * sizeof(int), stream_));
      launch(0);
      std::vector<int> draws(static_cast<std::size_t>(M) * n);
      CUDA_CHECK(cudaMemcpyAsync(draws.data(), out, draws.size() * sizeof(int), cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      std::string problem;
      if (!form.replacement) {
        for (long long r = 0; r < M && problem.empty(); ++r)
          for (int a = 0; a < n && problem.empty(); ++a)
            for (int b = a + 1; b < n; ++b)
              if (draws[r * n + a] == draws[r * n + b] && draws[r * n + a] >= 0) {
                problem = fmt::format("row {} drew {} twice without replacement", r, draws[r * n + a]);
                break;
              }
      }
      bench::DrawCheck check;
      if (problem.empty()) {
        std::vector<int> checked = draws;  // with replacement every draw; without, draw 0 (a plain draw)
        if (!form.replacement) {
          checked.resize(static_cast<std::size_t>(M));
          for (long long r = 0; r < M; ++r) checked[r] = draws[r * n];
        }
        const int per_row = form.replacement ? n : 1;
        check = bench::check_draws(checked, static_cast<long long>(checked.size()), K, distinct0, D,
                                   [D, per_row](long long i) { return bench::distinct_index(i / per_row, D); });
        if (!check.ok) problem = check.problem;
      }
      if (!problem.empty()) {
        failures.push_back(fmt::format("{} {} K={}: {}", algorithm, type_name, K, problem));
        fmt::print("  FAIL {:<22} {}\n", algorithm, problem);
        return;
      }
      const Timing timing = time_launches(launch, o_.warmup, o_.runs, stream_);
      const double ms = timing.median_ms;
      Row row{algorithm, type_name, K, M, 0, "", ms, bytes / (ms * 1e6), {timing.buffer_ms[0], timing.buffer_ms[1]}};
      fmt::print("  {:<22} {:>9.4f} ms {:>8.1f} GB/s {:>6.3f} of read   chi-square p {:.2g}   buffers {:.4f} / {:.4f} ms\n",
                 algorithm, ms, row.gbps, row.gbps / read_ceiling_gbps_, check.p_combined, timing.buffer_ms[0],
                 timing.buffer_ms[1]);
      rows.push_back(std::move(row));
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("{} {} K={}: {}", algorithm, type_name, K, e.what()));
      fmt::print("  ERROR {:<22} {}\n", algorithm, e.what());
      if (cudaDeviceSynchronize() != cudaSuccess) throw;
    }
  }

  void set_read_ceiling(double gbps) { read_ceiling_gbps_ = gbps; }

 private:
  // Timed run i of a point reads slice (i / 2) % slices of input buffer i % 2: one slice when M rows of K elements
  // fill the buffer; for a few rows, enough slices that together they exceed L2 several times (256 MB), so the
  // input comes from DRAM.
  long long slices_for(int K, long long M, std::size_t element_size) const {
    const long long capacity = std::max(M, static_cast<long long>(input_bytes_ / (K * element_size)));
    const double bytes = static_cast<double>(M) * K * element_size;
    return std::max(1ll, std::min(capacity / M, static_cast<long long>(std::ceil(2.56e8 / bytes))));
  }

  // fill() for a form: M rows of K of `type` in input buffer i, weights or their logarithms (-inf for a zero
  // weight). Returns the weights the device's values stand for (e^logit for logits), as doubles.
  std::vector<double> fill_form(int i, long long M, int K, ElementType type, bool logits, std::uint64_t seed) {
    const int D = o_.distinct_rows;
    std::vector<double> distinct = make_distinct_rows(D, K, seed);
    if (type == ElementType::f16 && !logits) {
      // f16 ends at 65504: rescale a row whose heavy tail would round to +inf (an invalid row, drawn as -1), so
      // that every row stays sampleable, as in the other types.
      constexpr double kLargestF16 = 65504.0;
      for (int d = 0; d < D; ++d) {
        double* w = &distinct[static_cast<std::size_t>(d) * K];
        const double largest = *std::max_element(w, w + K);
        if (largest > kLargestF16 / 2) for (int k = 0; k < K; ++k) w[k] *= kLargestF16 / 2 / largest;
      }
    }
    const std::size_t size = static_cast<std::size_t>(bfly::gen::size_of(type));
    std::vector<unsigned char> bytes(distinct.size() * size);
    for (std::size_t e = 0; e < distinct.size(); ++e) {
      const double v = logits ? (distinct[e] > 0 ? std::log(distinct[e]) : -INFINITY) : distinct[e];
      double stored = v;
      unsigned char* at = &bytes[e * size];
      switch (type) {
        case ElementType::f32: { const float x = static_cast<float>(v); std::memcpy(at, &x, 4); stored = x; break; }
        case ElementType::f64: std::memcpy(at, &v, 8); break;
        case ElementType::f16: { const auto x = bfly::to_half(static_cast<float>(v)); std::memcpy(at, &x, 2);
                                 stored = bfly::to_float(x); break; }
        case ElementType::bf16: { const auto x = bfly::to_bf16(static_cast<float>(v)); std::memcpy(at, &x, 2);
                                  stored = bfly::to_float(x); break; }
      }
      distinct[e] = logits ? std::exp(stored) : stored;
    }
    CUDA_CHECK(cudaMemcpyAsync(b_.distinct.as<void>(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_));
    if (size == 8) bench::expand_rows(b_.input[i].as<double>(), M, K, K, b_.distinct.as<const double>(), D, stream_);
    else if (size == 4) bench::expand_rows(b_.input[i].as<float>(), M, K, K, b_.distinct.as<const float>(), D, stream_);
    else bench::expand_rows(b_.input[i].as<unsigned short>(), M, K, K, b_.distinct.as<const unsigned short>(), D,
                            stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // `bytes` leaves scope
    return distinct;
  }

  // Writes M rows of K into input buffer i from D fresh distinct rows; returns those rows (as doubles of the
  // values the device holds).
  template <typename T>
  std::vector<double> fill(int i, long long M, int K, std::uint64_t seed) {
    const int D = o_.distinct_rows;
    std::vector<double> distinct = make_distinct_rows(D, K, seed);
    std::vector<T> typed(distinct.begin(), distinct.end());
    for (std::size_t e = 0; e < typed.size(); ++e) distinct[e] = static_cast<double>(typed[e]);
    CUDA_CHECK(cudaMemcpyAsync(b_.distinct.as<T>(), typed.data(), typed.size() * sizeof(T), cudaMemcpyHostToDevice,
                               stream_));
    bench::expand_rows(b_.input[i].as<T>(), M, K, K, b_.distinct.as<const T>(), D, stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // `typed` leaves scope
    return distinct;
  }

  // sample_split's scratch, grown to the largest point: part totals (double covers every accumulator) and the
  // arrival counters, zero when allocated (the kernels leave them at zero).
  void reserve_split_scratch(std::size_t part_bytes, long long rows) {
    if (split_parts_.size() < part_bytes) split_parts_ = DeviceMemory(part_bytes);
    const std::size_t arrival_bytes = static_cast<std::size_t>(rows) * sizeof(unsigned long long);
    if (split_arrivals_.size() < arrival_bytes) {
      split_arrivals_ = DeviceMemory(arrival_bytes);
      CUDA_CHECK(cudaMemset(split_arrivals_.as<void>(), 0, arrival_bytes));
      CUDA_CHECK(cudaDeviceSynchronize());  // the bench's stream is non-blocking: it would not wait for the memset
    }
  }

  const Options& o_;
  const cudaDeviceProp& prop_;
  cudaStream_t stream_;
  Buffers b_;
  std::size_t input_bytes_ = 0;
  DeviceMemory split_parts_, split_arrivals_;
  rt::Sampler sampler_;
  std::vector<rt::Sampler> variant_samplers_;  // one a kAutoVariants entry
  double read_ceiling_gbps_ = 0.0;
};

// ------------------------------------------------------------------------------------------------ report
void print_table(const std::vector<Row>& rows, const std::string& type, double read_gbps) {
  std::vector<std::string> algorithms;
  std::vector<std::pair<int, long long>> points;  // (K, M)
  for (const Row& r : rows) {
    if (r.type != type) continue;
    if (std::find(algorithms.begin(), algorithms.end(), r.algorithm) == algorithms.end())
      algorithms.push_back(r.algorithm);
    if (std::find(points.begin(), points.end(), std::pair{r.K, r.M}) == points.end()) points.emplace_back(r.K, r.M);
  }
  if (algorithms.empty()) return;
  std::sort(points.begin(), points.end());
  fmt::print("\n{} : fraction of the read ceiling ({:.0f} GB/s); rows (K, M), columns algorithms\n", type, read_gbps);
  fmt::print("{:>6} {:>9}", "K", "M");
  for (const auto& a : algorithms) fmt::print(" {:>14}", a.size() > 14 ? a.substr(a.size() - 14) : a);
  fmt::print("\n");
  for (const auto& [K, M] : points) {
    fmt::print("{:>6} {:>9}", K, M);
    for (const auto& a : algorithms) {
      auto it = std::find_if(rows.begin(), rows.end(), [&, K = K, M = M](const Row& r) {
        return r.type == type && r.K == K && r.M == M && r.algorithm == a;
      });
      if (it == rows.end()) fmt::print(" {:>14}", "-");
      else fmt::print(" {:>14.3f}", it->gbps / read_gbps);
    }
    fmt::print("\n");
  }
  // The minimum over K per algorithm (the goal: >= 0.85 for bfly at every K in [16, 4096]).
  fmt::print("{:>16}", "min");
  for (const auto& a : algorithms) {
    double worst = 1e30;
    for (const Row& r : rows)
      if (r.type == type && r.algorithm == a && r.K >= 16 && r.K <= 4096) worst = std::min(worst, r.gbps / read_gbps);
    if (worst > 1e29) fmt::print(" {:>14}", "-");
    else fmt::print(" {:>14.3f}", worst);
  }
  fmt::print("   (over K in [16, 4096])\n");
}

// --choices: the kernel bfly-auto chooses at each type, K and M of the sweep, and each named auto variant's, as
// "type K M algorithm kernel" lines (two trees' lines differ exactly where their choices do).
void print_choices(const Options& o) {
  for (ElementType type : o.types) {
    const std::string type_name(bfly::gen::name_of(type));
    for (int K : o.Ks)
      for_each_auto_choice(o, K, type, [&](long long M, std::string_view algorithm, const KernelSpec& spec) {
        fmt::print("{} {} {} {} {}\n", type_name, K, M, algorithm, bfly::gen::kernel_name(spec));
      });
  }
}

int run(Options o) {
  if (o.choices) {
    print_choices(o);
    return 0;
  }
  if (o.compile_only) {
    const std::vector<KernelSpec> specs = sweep_specs(o);
    const int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return bench::compile_all(specs, rt::parse_arch(o.arch), jobs, true).empty() ? 0 : 1;
  }

  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaFree(nullptr));  // creates the primary context; bfly's runtime launches in it too
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::string device = prop.name;
  const std::string date = today();
  o.device = rt::current_device_balance();
  fmt::print("device {}: {} SMs, {:.1f} GiB, L2 {:.0f} MB, compute capability {}.{}, memory {:.1f} bytes an SM and "
             "cycle ({} memory for bfly-auto); date {}\n", device, prop.multiProcessorCount,
             prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize / 1e6, prop.major, prop.minor,
             o.device.memory_bytes_per_sm_cycle, o.device.fast_memory() ? "fast" : "not fast", date);

  // Compile every bfly kernel of the sweep up front, in parallel.
  const std::vector<KernelSpec> specs = sweep_specs(o);
  const int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!specs.empty()) bench::compile_all(specs, rt::current_device_arch(), jobs, true);

  // Buffer sizes: the largest point of the sweep (the forms: their types and num_samples draws per row).
  std::size_t input_bytes = o.min_bytes;
  long long max_M = 0, max_draws = 0;
  int max_K = 0;
  const auto cover = [&](ElementType type, int draws_per_row) {
    const std::size_t size = bfly::gen::size_of(type);
    for (int K : o.Ks) {
      for (long long M : rows_at(o, K, size)) {
        input_bytes = std::max(input_bytes, static_cast<std::size_t>(M) * K * size);
        max_M = std::max(max_M, M);
        max_draws = std::max(max_draws, M * draws_per_row);
      }
      max_K = std::max(max_K, K);
    }
  };
  for (ElementType type : o.types) cover(type, 1);
  for (const std::string& name : o.forms) {
    const Form& form = form_named(name);
    for (ElementType type : form.input == bfly::gen::InputKind::logits ? o.form_types : o.types)
      cover(type, form.num_samples);
  }
  const bool need_scratch = wanted(o, "alg1") || wanted(o, "alg4-regs") || wanted(o, "alg4-smem");
  fmt::print("memory: 2 input buffers of {:.3f} GiB{}, {} rows at most\n", input_bytes / 1073741824.0,
             need_scratch ? " and a scratch table of the same size" : "", max_M);

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<Row> rows;
  std::vector<std::string> failures;
  Ceilings first, last;
  {
    Bench bench(o, prop, stream);
    bench.allocate(input_bytes, static_cast<std::size_t>(max_draws) * sizeof(int), need_scratch, max_K);
    first = bench.measure_ceilings();
    fmt::print("read ceiling {:.1f} GB/s ({:.4f} ms for {:.3f} GiB), copy ceiling {:.1f} GB/s read + write\n",
               first.read_gbps, first.read_ms, o.min_bytes / 1073741824.0, first.copy_gbps);
    bench.set_read_ceiling(first.read_gbps);

    const auto sweep_start = std::chrono::steady_clock::now();
    for (ElementType type : o.types) {
      for (int K : o.Ks) {
        for (long long M : rows_at(o, K, bfly::gen::size_of(type))) {
          fmt::print("{} K={} M={}\n", bfly::gen::name_of(type), K, M);
          std::fflush(stdout);
          bfly::gen::visit_element_type(
              type, [&](auto tag) { bench.run_point<typename decltype(tag)::type>(K, M, rows, failures); });
        }
      }
    }
    for (const std::string& name : o.forms) {
      const Form& form = form_named(name);
      for (ElementType type : form.input == bfly::gen::InputKind::logits ? o.form_types : o.types)
        for (int K : o.Ks)
          for (long long M : rows_at(o, K, bfly::gen::size_of(type))) {
            fmt::print("{} {} K={} M={}\n", name, bfly::gen::name_of(type), K, M);
            if (!form_fits(form, K)) {
              fmt::print("  skipped: {} distinct draws need K >= {}\n", form.num_samples, form.num_samples);
              continue;
            }
            bench.run_form_point(form, type, K, M, rows, failures);
          }
    }
    last = bench.measure_ceilings();
    fmt::print("read ceiling again after the sweep: {:.1f} GB/s; copy {:.1f} GB/s (sweep took {:.0f} s)\n",
               last.read_gbps, last.copy_gbps,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count());
  }
  CUDA_CHECK(cudaStreamDestroy(stream));

  // The stronger of the two measurements is the ceiling (a weak ceiling would inflate every fraction).
  const Ceilings& ceiling = last.read_gbps > first.read_gbps ? last : first;
  const double read_gbps = ceiling.read_gbps;
  const double copy_gbps = std::max(first.copy_gbps, last.copy_gbps);
  const double copy_ms = first.copy_gbps >= last.copy_gbps ? first.copy_ms : last.copy_ms;

  // A second run of the day writes <device>-<date>-2-sampling.csv and so on: an earlier run's file is kept.
  const std::string path =
      bfly::create_unused_file(o.out_dir, fmt::format("{}-{}", device_slug(device), date), "-sampling.csv");
  bfly::OutputFile csv(path);
  csv.text("device,date,algorithm,type,K,M,W,variant,median_ms,gbps,read_ceiling_gbps,fraction_of_read_ceiling,"
           "buffer0_ms,buffer1_ms\n");
  const auto buffer_field = [](double ms) { return ms > 0.0 ? fmt::format("{:.5f}", ms) : std::string(); };
  const auto write = [&](const Row& r) {
    csv.text(fmt::format("{},{},{},{},{},{},{},{},{:.5f},{:.2f},{:.2f},{:.4f},{},{}\n", csv_field(device), date,
                         r.algorithm, r.type, r.K > 0 ? std::to_string(r.K) : "", r.M > 0 ? std::to_string(r.M) : "",
                         r.W > 0 ? std::to_string(r.W) : "", r.variant, r.median_ms, r.gbps, read_gbps,
                         r.gbps / read_gbps, buffer_field(r.buffer_ms[0]), buffer_field(r.buffer_ms[1])));
  };
  write(Row{"read-ceiling", "", 0, 0, 0, "", ceiling.read_ms, read_gbps});
  write(Row{"copy-ceiling", "", 0, 0, 0, "", copy_ms, copy_gbps});
  for (const Row& r : rows) write(r);
  csv.commit();

  for (ElementType type : o.types) print_table(rows, std::string(bfly::gen::name_of(type)), read_gbps);
  fmt::print("\nread ceiling {:.1f} GB/s (before {:.1f}, after {:.1f}); copy ceiling {:.1f} GB/s\nwrote {}\n",
             read_gbps, first.read_gbps, last.read_gbps, copy_gbps, path);
  if (!failures.empty()) {
    fmt::print("\n{} CHECK FAILURES (left out of the CSV):\n", failures.size());
    for (const auto& f : failures) fmt::print("  {}\n", f);
    return 1;
  }
  fmt::print("all draws checked: ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Options options = parse_options(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "bfly-bench: error: %s\n", e.what());
    return 2;
  }
}
