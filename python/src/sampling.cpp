// bfly.sample and bfly.sample_logits below the Python layer. The Python layer reads an array's pointer, shape,
// strides, element type and device (a few attribute reads per framework) and makes one call here, which checks
// everything (ValueError or TypeError naming the argument), chooses the kernel and, on the GPU, enqueues it:
//
//   check_call      shape, strides, alignment, num_samples, replacement, temperature, seed and offset -> SampleCall
//   GpuLaunches     the loaded kernel of a (context, element type, K, form) from a small cache, then one launch
//
// The kernel is the one bfly::rt::Sampler would run for the same call (Sampler::sample's for one draw per row,
// Sampler::sample_draws's for num_samples draws and for logits), so the Python package draws what the C++ runtime
// draws; the CPU path (module.cpp, CpuKernelLibrary) runs the same spec with call_arguments(), so it draws that too.
#include "sampling.hpp"

#include "device.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"
#include "bfly/spec/choose.hpp"

#include <fmt/format.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using bfly::gen::Draws;
using bfly::gen::ElementType;
using bfly::gen::InputKind;
using bfly::gen::KernelSpec;

[[noreturn]] void value_error(const std::string& message) { throw nb::value_error(message.c_str()); }
[[noreturn]] void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

// A Python int (not a bool) in 0 .. max, else ValueError "<name> = <repr>; <rule>".
std::uint64_t integer_argument(nb::handle value, const char* name, std::uint64_t max, const std::string& rule) {
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
    if (!(v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) && v <= max) return v;
    PyErr_Clear();  // negative or above 2^64 - 1
  }
  value_error(fmt::format("{} = {}; {}", name, nb::repr(value).c_str(), rule));
}

// A fresh 64-bit seed for seed=None, from a per-thread generator seeded by the operating system.
std::uint64_t fresh_seed() {
  thread_local std::mt19937_64 generator = [] {
    std::random_device device;
    std::seed_seq sequence{device(), device(), device(), device()};
    return std::mt19937_64(sequence);
  }();
  return generator();
}

// Everything bfly.sample and bfly.sample_logits check that does not need the GPU, in the order the arguments are
// named. `shape` and `strides` are the array's (a sequence of two integers each; strides in bytes when
// strides_in_bytes, else in elements), `pointer` its data. num_samples is None (one draw per row) or an int >= 1
// (the Python layer has checked its type, to allocate the draws).
SampleCall check_call(int type_index, std::uintptr_t pointer, nb::handle shape, nb::handle strides,
                      bool strides_in_bytes, nb::handle num_samples, bool replacement, bool logits,
                      double temperature, nb::handle seed, nb::handle offset) {
  const char* input_name = logits ? "logits" : "weights";
  const char* function = logits ? "bfly.sample_logits" : "bfly.sample";
  if (type_index < 0 || type_index >= static_cast<int>(std::size(bfly::gen::kElementTypes)))
    throw bfly::Error(fmt::format("{}: element type index {} out of range", function, type_index));
  const ElementType type = bfly::gen::kElementTypes[type_index].type;
  const long long element_size = bfly::gen::size_of(type);
  if (nb::len(shape) != 2)
    value_error(fmt::format("{0} must be 2-D (M rows of K {0}), but it has shape {1}; for one distribution pass "
                            "{0}[None, :]", input_name, nb::repr(nb::tuple(nb::borrow(shape))).c_str()));
  const auto M = nb::cast<long long>(shape[0]);
  const auto K_columns = nb::cast<long long>(shape[1]);
  if (K_columns < 1 || K_columns > KernelSpec::kMaxK)
    value_error(fmt::format("{} has K = {} columns; K must be in 1 .. {}", input_name, K_columns, KernelSpec::kMaxK));
  const int K = static_cast<int>(K_columns);
  if (logits && bfly::gen::accumulator_of(type) != ElementType::f32)
    type_error(fmt::format("logits has dtype float64; bfly.sample_logits takes float32, float16 or bfloat16 logits "
                           "(the softmax is formed in float32)"));

  SampleCall call;
  call.M = M;
  call.input = reinterpret_cast<const void*>(pointer);
  call.ld = K;
  if (M > 0) {
    long long row_stride = nb::cast<long long>(strides[0]);
    long long column_stride = nb::cast<long long>(strides[1]);
    const auto in_elements = [&](long long stride, bool& exact) {
      if (!strides_in_bytes) return stride;
      exact = stride % element_size == 0;
      return stride / element_size;
    };
    bool row_exact = true, column_exact = true;
    row_stride = in_elements(row_stride, row_exact);
    column_stride = in_elements(column_stride, column_exact);
    if (K > 1 && (column_stride != 1 || !column_exact))
      value_error(fmt::format("{} must have its rows' elements contiguous (column stride 1), but its strides are "
                              "{} {}; pass a contiguous copy (e.g. .contiguous() or np.ascontiguousarray)", input_name,
                              nb::repr(nb::tuple(nb::borrow(strides))).c_str(), strides_in_bytes ? "bytes" : "elements"));
    if (M > 1) {
      if (!row_exact || row_stride < K)
        value_error(fmt::format("{} has a row stride of {} {}, less than its K = {} columns (rows must not overlap or "
                                "run backwards); pass a contiguous copy", input_name,
                                nb::cast<long long>(strides[0]), strides_in_bytes ? "bytes" : "elements", K));
      call.ld = row_stride;
    }
    if (pointer % static_cast<std::uintptr_t>(element_size) != 0)
      value_error(fmt::format("{}' data at {:#x} is not aligned to its {}-byte elements", input_name, pointer,
                              element_size));
  }

  call.one_draw = num_samples.is_none();
  if (!call.one_draw) {
    const long long n = nb::cast<long long>(num_samples);
    if (n < 1) value_error(fmt::format("num_samples = {}; it must be None (one draw per row) or an integer >= 1", n));
    if (replacement && n > bfly::gen::kMaxDraws)
      value_error(fmt::format("num_samples = {} is above the most draws per row with replacement, {}", n,
                              bfly::gen::kMaxDraws));
    if (!replacement && n > K)
      value_error(fmt::format("num_samples = {} distinct categories (replacement=False) cannot come from K = {} "
                              "categories", n, K));
    if (!replacement && n > bfly::gen::kMaxDistinctDraws)
      value_error(fmt::format("num_samples = {} without replacement is above the most distinct draws per row, {}; "
                              "draw with replacement, or in several calls", n, bfly::gen::kMaxDistinctDraws));
    call.num_samples = static_cast<int>(n);
  }
  if (logits) {
    if (!(temperature > 0) || !std::isfinite(temperature))
      value_error(fmt::format("temperature = {}; it must be positive and finite (the draws follow "
                              "softmax(logits / temperature))", temperature));
    call.temperature = temperature;
  }
  call.seed = seed.is_none() ? fresh_seed()
                             : integer_argument(seed, "seed", ~std::uint64_t{0},
                                                "it must be None or an integer in 0 .. 2**64 - 1");
  // Draw d of row r takes Philox counter (r, d, offset): one offset serves every draw of the call.
  call.iteration = static_cast<std::uint32_t>(integer_argument(
      offset, "offset", 0xffffffffull, "it must be an integer in 0 .. 2**32 - 1 (the Philox iteration of the draws)"));

  // The kernel: Sampler::sample's for one draw per row from weights (sample_small, the row kernel or sample_split,
  // chosen with M), else Sampler::sample_draws's form of the row kernel.
  if (call.one_draw && !logits) {
    call.spec = bfly::gen::fit_to_rows(bfly::gen::choose_sample_spec(K, type, {}, M), call.input, call.ld);
  } else {
    bfly::rt::DrawRequest request;
    request.input = logits ? InputKind::logits : InputKind::weights;
    request.temperature = call.temperature;
    request.num_samples = call.num_samples;
    request.replacement = replacement || call.num_samples == 1;  // one draw: the same kernel serves both
    call.spec = bfly::rt::draws_spec(K, type, request, {}, M);
  }
  return call;
}

}  // namespace

namespace {

// The form of a checked call with several draws or logits, as Sampler::sample_draws takes it.
bfly::rt::DrawRequest draw_request(const SampleCall& call) {
  bfly::rt::DrawRequest request;
  request.input = call.spec.input;
  request.temperature = call.temperature;
  request.num_samples = call.num_samples;
  request.replacement = call.spec.draws == Draws::with_replacement;
  return request;
}

}  // namespace

// One draw from weights takes Sampler::sample's kernel on the current context's device: check_call chose it for a
// device unknown (the CPU path runs that spec), and the device's balance may keep long rows in the row kernel
// (bfly::gen::DeviceBalance).
void choose_for_device(SampleCall& call) {
  if (call.spec.draws != Draws::one || call.spec.input != InputKind::weights || call.M == 0) return;
  call.spec = bfly::rt::sample_spec_on_device(call.spec.K, call.spec.type, {}, call.M, call.input, call.ld);
}

bfly::gen::PackedArgs call_arguments(const SampleCall& call, int* out, void* part_totals,
                                     unsigned long long* arrivals) {
  if (call.spec.draws == Draws::one)
    return bfly::rt::sample_arguments(call.spec, call.input, call.M, call.ld, out, call.seed, call.iteration,
                                      part_totals, arrivals);
  return bfly::rt::draws_arguments(call.spec, call.input, call.M, call.ld, draw_request(call), out, call.seed,
                                   call.iteration, part_totals, arrivals);
}

namespace {

// The GPU launches of one Python thread: loaded kernels found by (context, element type, K, form, few rows) in a
// hash map of small keys, so a call formats no kernel name and hashes no string. sample_split (which needs the
// Sampler's scratch) goes through the thread's Sampler.
class GpuLaunches {
 public:
  void launch(const SampleCall& call, int* out, CUstream stream) {
    if (call.M == 0) return;
    // sample_split, and a row kernel whose last wave sample_split draws (bfly::gen::rows_past_last_wave), go through
    // the thread's Sampler, which keeps sample_split's scratch.
    if (bfly::gen::splits_rows(call.spec.operation) || past_last_wave(call)) {
      auto* s = reinterpret_cast<CUstream_st*>(stream);
      if (call.spec.draws == Draws::one)
        sampler_.sample(call.input, call.spec.type, call.M, call.spec.K, call.ld, out, call.seed, call.iteration, s);
      else
        sampler_.sample_draws(call.input, call.spec.type, call.M, call.spec.K, call.ld, draw_request(call), out,
                              call.seed, call.iteration, s);
      return;
    }
    bfly::gen::PackedArgs args = call_arguments(call, out);
    bfly::rt::launch(kernel(call.spec), args, stream);
  }

  bfly::rt::Sampler& sampler() { return sampler_; }

 private:
  // Whether Sampler::sample would give the rows of the row kernel's last wave to sample_split on this device.
  bool past_last_wave(const SampleCall& call) {
    if (call.spec.draws != Draws::one) return false;
    const bfly::rt::Kernel& k = kernel(call.spec);
    return bfly::gen::rows_past_last_wave(call.spec, call.M, k.ctas_per_sm, k.sms, k.can_overlap) > 0;
  }

  struct Key {
    CUcontext context;
    std::uint64_t form;  // element type, K, input, draws and operation, packed
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept {
      return std::hash<const void*>()(key.context) ^ (std::hash<std::uint64_t>()(key.form) * 0x9e3779b97f4a7c15ull);
    }
  };

  const bfly::rt::Kernel& kernel(const KernelSpec& spec) {
    // The spec follows from these fields and the chooser's rules, so they identify the loaded kernel.
    const std::uint64_t form = static_cast<std::uint64_t>(spec.K) | static_cast<std::uint64_t>(spec.type) << 32 |
                               static_cast<std::uint64_t>(spec.input) << 40 |
                               static_cast<std::uint64_t>(spec.draws) << 44 |
                               static_cast<std::uint64_t>(spec.operation) << 48;
    const Key key{bfly::rt::current_context(), form};
    if (const auto it = cache_.find(key); it != cache_.end()) return *it->second;
    const bfly::rt::Kernel& loaded = kernels_.get(spec);  // generate, compile (kernel cache) and load
    cache_.emplace(key, &loaded);
    return loaded;
  }

  bfly::rt::LoadedKernels kernels_;  // owns the kernels; their addresses are stable (a std::map)
  std::unordered_map<Key, const bfly::rt::Kernel*, KeyHash> cache_;
  bfly::rt::Sampler sampler_{[] {
    bfly::rt::SamplerOptions options;
    options.report_invalid_rows = false;  // enqueue only: invalid rows are read from the draws (-1)
    return options;
  }()};
};

GpuLaunches& thread_launches() {
  thread_local GpuLaunches launches;
  return launches;
}

}  // namespace

void bind_sampling(nb::module_& m) {
  // The CPU path: the checked call's kernel spec and its values (the CpuKernelLibrary of the spec runs it).
  nb::class_<SampleCall>(m, "SampleCall")
      .def_ro("spec", &SampleCall::spec)
      .def_ro("M", &SampleCall::M)
      .def_ro("num_samples", &SampleCall::num_samples)
      .def_ro("seed", &SampleCall::seed)
      .def_ro("iteration", &SampleCall::iteration);
  m.def("check_call", &check_call, "type_index"_a, "pointer"_a, "shape"_a, "strides"_a, "strides_in_bytes"_a,
        "num_samples"_a.none(), "replacement"_a, "logits"_a, "temperature"_a, "seed"_a.none(), "offset"_a);

  // The GPU path in one call: checks (as check_call), the kernel from the thread's cache, and the launch on
  // `stream` in device `device`'s primary context, into `out` (a device pointer to M x num_samples ints).
  m.def(
      "sample_gpu",
      [](int type_index, std::uintptr_t pointer, nb::handle shape, nb::handle strides, bool strides_in_bytes,
         int device, std::uintptr_t out, nb::handle num_samples, bool replacement, bool logits, double temperature,
         nb::handle seed, nb::handle offset, std::uintptr_t stream) {
        SampleCall call = check_call(type_index, pointer, shape, strides, strides_in_bytes, num_samples,
                                     replacement, logits, temperature, seed, offset);
        if (call.M == 0) return;
        ContextScope scope(device);
        choose_for_device(call);
        thread_launches().launch(call, reinterpret_cast<int*>(out), reinterpret_cast<CUstream>(stream));
      },
      "type_index"_a, "pointer"_a, "shape"_a, "strides"_a, "strides_in_bytes"_a, "device"_a, "out"_a,
      "num_samples"_a.none(), "replacement"_a, "logits"_a, "temperature"_a, "seed"_a.none(), "offset"_a,
      "stream"_a);

  // For bench/: seconds per call of one draw per row made `calls` times from C++, through Sampler::sample
  // (path "sampler", an enqueue-only Sampler) or through bfly.sample's own launch path (path "launch": the
  // thread's kernel cache and one launch, what sample_gpu does after its checks), the stream synchronized before
  // and after the timed loop: (enqueue, until done).
  m.def(
      "time_cpp_calls",
      [](std::uintptr_t weights, const std::string& type, long long M, int K, long long ld, std::uintptr_t out,
         std::uintptr_t stream, int calls, const std::string& path) {
        if (path != "sampler" && path != "launch")
          throw nb::value_error(fmt::format("path = '{}'; it must be 'sampler' or 'launch'", path).c_str());
        const ElementType element = bfly::gen::parse_element_type(type);
        GpuLaunches& launches = thread_launches();
        SampleCall call;
        call.input = reinterpret_cast<const void*>(weights);
        call.spec = bfly::gen::fit_to_rows(bfly::gen::choose_sample_spec(K, element, {}, M), call.input, ld);
        call.M = M;
        call.ld = ld;
        call.seed = 1;
        choose_for_device(call);
        auto* s = reinterpret_cast<CUstream_st*>(stream);
        const auto one = [&](std::uint32_t iteration) {
          if (path == "sampler") {
            launches.sampler().sample(call.input, element, M, K, ld, reinterpret_cast<int*>(out), call.seed,
                                      iteration, s);
          } else {
            call.iteration = iteration;
            launches.launch(call, reinterpret_cast<int*>(out), reinterpret_cast<CUstream>(stream));
          }
        };
        nb::gil_scoped_release unlocked;
        one(0);
        bfly::rt::check(bfly::rt::driver().StreamSynchronize(reinterpret_cast<CUstream>(s)), "cuStreamSynchronize");
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) one(static_cast<std::uint32_t>(i));
        const auto enqueued = std::chrono::steady_clock::now();
        bfly::rt::check(bfly::rt::driver().StreamSynchronize(reinterpret_cast<CUstream>(s)), "cuStreamSynchronize");
        const auto done = std::chrono::steady_clock::now();
        return std::make_tuple(std::chrono::duration<double>(enqueued - start).count() / calls,
                               std::chrono::duration<double>(done - start).count() / calls);
      },
      "weights"_a, "type"_a, "M"_a, "K"_a, "ld"_a, "out"_a, "stream"_a, "calls"_a, "path"_a = "sampler");
}
