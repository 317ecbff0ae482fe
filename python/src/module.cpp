// bfly._bfly: the compiled half of the Python package. It binds what the Python layer (python/bfly/) cannot do
// itself: the kernel specs and generator, NVRTC inspection, bfly.sample's checks and GPU launches (sampling.cpp),
// running a generated kernel compiled by the host C++ compiler on the CPU (bfly/lockstep.hpp), and the LDA trainer.
//
// Functions take plain values (pointers as integers, element types as tags or indices): the Python layer reads the
// arrays of each framework; bad arguments raise ValueError or TypeError naming them, and bfly::Error from below
// reaches Python as bfly.Error.
#include "dlpack.hpp"
#include "sampling.hpp"

#include "bfly/emit/cpu_launcher.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/inspect.hpp"
#include "bfly/lda/corpus.hpp"
#include "bfly/lda/evaluation.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/gpu_inference.hpp"
#include "bfly/lda/inference.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/lda/trainer.hpp"
#include "bfly/spec/choose.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

// The Python package compiles the CPU kernels it needs at run time (python/bfly/_cpu.py), so its build holds no
// kernel compiled in at build time: bfly-lda's table of them (lda/CMakeLists.txt, BFLY_LDA_CPU_KERNELS) is empty
// here, and GeneratedCpuZStep runs the kernels that CpuKernelLibrary loads.
namespace bfly::lda {
std::span<const CompiledZKernel> compiled_z_kernels() { return {}; }
}  // namespace bfly::lda

namespace {

using bfly::gen::ElementType;
using bfly::gen::KernelSpec;

// The entry point every CPU kernel library exports (cpu_translation_unit writes it).
constexpr const char* kCpuEntryPoint = "bfly_cpu_launch";
using CpuLaunch = void (*)(long long, unsigned int, unsigned int, void**);

// The C++ translation unit that runs `spec`'s kernel on the CPU: bfly/lockstep.hpp, the generated source with
// bfly's fragments pasted in (the text NVRTC compiles, unchanged), its launcher, and an extern "C" entry point.
std::string cpu_translation_unit(const KernelSpec& spec) {
  const bfly::gen::Source source = bfly::gen::generate(spec);
  return fmt::format(
      "// {}: the generated kernel for CPU execution (bfly/lockstep.hpp), written by the bfly Python package.\n"
      "#include \"bfly/lockstep.hpp\"\n\n{}\n{}\n"
      "extern \"C\" void {}(long long workers, unsigned int grid, unsigned int threads, void** args) {{\n"
      "  bfly_cpu_launcher(workers, grid, threads, args);\n}}\n",
      source.kernel_name, bfly::gen::inline_headers(source),
      bfly::gen::cpu_launcher(source, bfly::gen::family(source.family), "bfly_cpu_launcher"), kCpuEntryPoint);
}

// A shared library built from cpu_translation_unit(spec), opened once and kept for the process.
class CpuKernelLibrary {
 public:
  CpuKernelLibrary(const std::string& path, const KernelSpec& spec)
      : spec_(spec), name_(bfly::gen::kernel_name(spec)), family_(bfly::gen::family_of(spec).name) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw bfly::Error(fmt::format("cannot load the CPU kernel {}: {}", path, dlerror()));
    auto launch = reinterpret_cast<CpuLaunch>(dlsym(handle_, kCpuEntryPoint));
    if (launch == nullptr) {
      dlclose(handle_);
      throw bfly::Error(fmt::format("{} has no entry point {}; delete it so that it is rebuilt", path, kCpuEntryPoint));
    }
    kernel_.spec = spec_;
    kernel_.kernel = bfly::cpu::CpuKernel{name_, family_, bfly::gen::launch_geometry(spec_), launch};
  }
  CpuKernelLibrary(const CpuKernelLibrary&) = delete;
  CpuKernelLibrary& operator=(const CpuKernelLibrary&) = delete;
  // The library stays loaded: a GeneratedCpuZStep may still point at its kernel, and unloading saves nothing.
  ~CpuKernelLibrary() = default;

  const KernelSpec& spec() const { return spec_; }
  const bfly::lda::CompiledZKernel& compiled() const { return kernel_; }

  // Runs a checked bfly.sample call (sampling.cpp's check_call, for this library's spec) on host arrays: `out`
  // holds M x num_samples ints. sample_split's scratch is allocated here, as the Sampler keeps it on the GPU: a
  // level-1 total per part of each row (in the accumulator type) and an arrival counter per row, zero before.
  void run(const SampleCall& call, std::uintptr_t out, long long workers) const {
    if (!(call.spec == spec_))
      throw bfly::Error(fmt::format("the call is for the kernel {}, this library holds {}",
                                    bfly::gen::kernel_name(call.spec), name_));
    std::vector<unsigned char> part_totals;
    std::vector<unsigned long long> arrivals;
    if (bfly::gen::splits_rows(spec_.operation)) {
      const auto parts = static_cast<std::size_t>(call.M) * bfly::gen::part_totals_per_row(spec_);
      part_totals.resize(parts * bfly::gen::size_of(bfly::gen::accumulator_of(spec_.type)));
      arrivals.assign(static_cast<std::size_t>(call.M), 0ull);
    }
    bfly::gen::PackedArgs args = call_arguments(call, reinterpret_cast<int*>(out),
                                                part_totals.empty() ? nullptr : part_totals.data(),
                                                arrivals.empty() ? nullptr : arrivals.data());
    nb::gil_scoped_release unlocked;
    bfly::cpu::run(kernel_.kernel, args, workers);
  }

 private:
  KernelSpec spec_;
  std::string name_;
  std::string family_;
  void* handle_ = nullptr;
  bfly::lda::CompiledZKernel kernel_;
};

ElementType parse_type(const std::string& tag) { return bfly::gen::parse_element_type(tag); }

KernelSpec sample_spec(int K, const std::string& type, std::optional<int> W, std::optional<std::string> variant,
                       std::optional<int> R, long long M) {
  bfly::gen::SampleChoice forced;
  forced.W = W;
  forced.R = R;
  if (variant) forced.variant = bfly::gen::parse_variant(*variant);
  if (K < 1 || K > KernelSpec::kMaxK)
    throw bfly::Error(fmt::format("K = {} is out of range; K must be in 1 .. {}", K, KernelSpec::kMaxK));
  // M rows: the Sampler's choice on a device of unknown balance (the H100's rules; the GPU path re-chooses for its
  // device: choose_for_device).
  return bfly::gen::choose_sample_spec(K, parse_type(type), forced, M);
}

// ---- LDA -----------------------------------------------------------------------------------------------------

using DocOffsets = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using WordIds = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Documents in CSR form (doc_offsets: D + 1 entries from 0; word ids in `vocab`), documents in the order given.
bfly::lda::Corpus documents_of(DocOffsets doc_offsets, WordIds words, const std::vector<std::string>& vocab) {
  bfly::lda::Corpus corpus;
  corpus.doc_offsets.assign(doc_offsets.data(), doc_offsets.data() + doc_offsets.shape(0));
  corpus.words.assign(words.data(), words.data() + words.shape(0));
  corpus.vocab = vocab;
  corpus.doc_ids.resize(static_cast<std::size_t>(corpus.num_docs()));
  for (std::size_t m = 0; m < corpus.doc_ids.size(); ++m) corpus.doc_ids[m] = static_cast<std::int64_t>(m);
  corpus.input_documents = corpus.num_docs();
  corpus.check();
  return corpus;
}

// The z-step of inference as bfly::lda::inference_zstep chooses it (topic_model.hpp): the GPU's when one is asked
// for or can be used ("auto"), else the GPU's generated kernel on the CPU, here compiled at run time by
// cpu_kernel_for(spec) instead of taken from bfly-lda's build-time table. `documents` are those the z-step sees
// (the kernel's width follows their mean length).
template <typename T>
std::unique_ptr<bfly::lda::FixedPhiZStep<T>> inference_zstep(const bfly::lda::Model& model,
                                                              const bfly::lda::Corpus& documents,
                                                              const std::string& device, int threads,
                                                              nb::object cpu_kernel_for) {
  if (device != "auto" && device != "gpu" && device != "cpu")
    throw bfly::Error(fmt::format("device = '{}'; it must be 'auto', 'gpu' or 'cpu'", device));
  if (device == "gpu" || (device == "auto" && bfly::lda::gpu_available())) return bfly::lda::gpu_fixed_phi_zstep<T>();
  const KernelSpec spec =
      bfly::lda::gpu_z_spec<T>(model.topics(), {}, bfly::lda::mean_document_length(documents));
  // The library stays loaded for the process (python/bfly/_cpu.py keeps it), so the z-step may point into it.
  const auto* library = nb::cast<CpuKernelLibrary*>(cpu_kernel_for(spec));
  return bfly::lda::with_fixed_phi<T>(std::make_unique<bfly::lda::GeneratedCpuZStep<T>>(library->compiled(), threads));
}

nb::ndarray<nb::numpy, double, nb::ndim<2>> matrix_to_numpy(std::vector<double> values, std::size_t rows,
                                                           std::size_t cols) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::ndarray<nb::numpy, double, nb::ndim<2>>(owned->data(), {rows, cols}, owner);
}

// T of a std::unique_ptr<bfly::lda::Trainer<T>>.
template <typename TrainerPtr>
struct TrainerElement;
template <typename T>
struct TrainerElement<std::unique_ptr<bfly::lda::Trainer<T>>> {
  using type = T;
};
template <typename TrainerPtr>
using ElementOf = typename TrainerElement<TrainerPtr>::type;

// A trainer of element type float or double over a corpus it owns, with the engine chosen at construction.
class LdaModel {
 public:
  LdaModel(nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> doc_offsets,
           nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> words,
           nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> doc_ids,
           std::vector<std::string> vocab, std::int64_t input_documents, const std::string& type, int topics,
           double alpha, double beta, std::uint64_t seed, const std::string& estimate, int threads,
           const std::string& device, std::optional<std::string> checkpoint, nb::object cpu_kernel_for) {
    corpus_ = std::make_unique<bfly::lda::Corpus>();
    corpus_->doc_offsets.assign(doc_offsets.data(), doc_offsets.data() + doc_offsets.shape(0));
    corpus_->words.assign(words.data(), words.data() + words.shape(0));
    corpus_->doc_ids.assign(doc_ids.data(), doc_ids.data() + doc_ids.shape(0));
    corpus_->vocab = std::move(vocab);
    corpus_->input_documents = input_documents;
    corpus_->check();
    bfly::lda::TrainerOptions options;
    options.topics = topics;
    options.priors = {alpha, beta};
    options.seed = seed;
    options.threads = threads;
    options.estimate = bfly::lda::parse_estimate(estimate);  // bfly.LDA turns "auto" into collapsed
    const ElementType element = parse_type(type);
    if (element == ElementType::f32) {
      trainer_ = make_trainer<float>(options, device, checkpoint, cpu_kernel_for);
    } else if (element == ElementType::f64) {
      trainer_ = make_trainer<double>(options, device, checkpoint, cpu_kernel_for);
    } else {
      throw bfly::Error(fmt::format("LDA trains in f32 or f64, not {}", type));
    }
  }

  // The estimate the run forms between z-steps ("collapsed", "mean" or "draw").
  std::string estimate() const {
    return std::visit([](const auto& t) { return std::string(bfly::lda::name_of(t->options().estimate)); }, trainer_);
  }

  std::string engine() const {
    return std::visit([](const auto& t) { return t->engine().name(); }, trainer_);
  }
  // One iteration: (iteration, ll per token, z-step seconds, iteration seconds).
  std::tuple<std::uint32_t, double, double, double> step() {
    nb::gil_scoped_release unlocked;
    const bfly::lda::IterationStats stats = std::visit([](auto& t) { return t->step(); }, trainer_);
    return {stats.iteration, stats.ll_per_token, stats.zstep_seconds, stats.iteration_seconds};
  }
  std::uint32_t iteration() const {
    return std::visit([](const auto& t) { return t->iteration(); }, trainer_);
  }
  double ll_per_token() const {
    return std::visit([](const auto& t) { return t->ll_per_token(); }, trainer_);
  }
  void save_checkpoint(const std::string& path) const {
    std::visit([&](const auto& t) { t->save_checkpoint(path); }, trainer_);
  }
  // phi (V x K) and theta (D x K, corpus order) as float64 NumPy arrays, the posterior means given the current
  // topics or their average over the iterations added (Trainer::output_phi: what bfly-lda writes), and the topic
  // counts n_wk (V x K).
  nb::ndarray<nb::numpy, double, nb::ndim<2>> phi() const {
    return std::visit([&](const auto& t) { return to_numpy(t->output_phi(), corpus_->vocab_size()); }, trainer_);
  }
  nb::ndarray<nb::numpy, double, nb::ndim<2>> theta() const {
    return std::visit([&](const auto& t) { return to_numpy(t->output_theta(), corpus_->num_docs()); }, trainer_);
  }
  void add_means_to_average() {
    nb::gil_scoped_release unlocked;
    std::visit([](auto& t) { t->add_means_to_average(); }, trainer_);
  }
  void clear_average() {
    std::visit([](auto& t) { t->clear_average(); }, trainer_);
  }
  // The outputs of a saved model (theta() and phi() as they were saved): Trainer::restore_average.
  void restore_average(nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> theta,
                       nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> phi) {
    std::visit([&](auto& t) {
      t->restore_average(std::span<const double>(theta.data(), theta.size()),
                         std::span<const double>(phi.data(), phi.size()));
    }, trainer_);
  }
  nb::ndarray<nb::numpy, double, nb::ndim<2>> word_topic_counts() const {
    return std::visit([&](const auto& t) { return to_numpy(t->counts().word_topic, corpus_->vocab_size()); },
                      trainer_);
  }
  std::vector<std::int32_t> top_words(int k, int count) const {
    return std::visit([&](const auto& t) { return t->top_words(k, count); }, trainer_);
  }
  // Writes bfly-lda's outputs (topics.txt, theta.bin, phi.bin, documents.txt, vocab.txt) into `dir`, so that the
  // directory is also a bfly-lda model (bfly-lda infer/evaluate, bfly::lda::load_model).
  void write_outputs(const std::string& dir, int top_words) const {
    std::visit([&](const auto& t) { t->write_outputs(dir, top_words); }, trainer_);
  }

  // bfly::lda::infer on the model as trained so far: theta (D x K, documents as given) and the z-step's name.
  std::tuple<nb::ndarray<nb::numpy, double, nb::ndim<2>>, std::string> infer(
      DocOffsets doc_offsets, WordIds words, int iterations, int burn_in, std::uint64_t seed, int threads,
      const std::string& device, nb::object cpu_kernel_for) const {
    const bfly::lda::Corpus documents = documents_of(doc_offsets, words, corpus_->vocab);
    const bfly::lda::InferenceOptions options{iterations, burn_in, seed, threads};
    bfly::lda::Inference inference = std::visit(
        [&](const auto& t) {
          using T = ElementOf<std::decay_t<decltype(t)>>;
          const bfly::lda::Model model = bfly::lda::model_of(*t);
          const auto zstep = inference_zstep<T>(model, documents, device, threads, cpu_kernel_for);
          nb::gil_scoped_release unlocked;
          return bfly::lda::infer_with<T>(model, documents, options, *zstep);
        },
        trainer_);
    const auto D = static_cast<std::size_t>(documents.num_docs());
    return {matrix_to_numpy(std::move(inference.theta), D, static_cast<std::size_t>(inference.topics)),
            inference.engine};
  }

  // bfly::lda::evaluate: document completion on `heldout`, NPMI of the top `top_words` words over the reference
  // documents. A dict of bfly::lda::Evaluation's fields.
  nb::dict evaluate(DocOffsets heldout_offsets, WordIds heldout_words, DocOffsets reference_offsets,
                    WordIds reference_words, int iterations, int burn_in, std::uint64_t seed, int threads,
                    int top_words, const std::string& device, nb::object cpu_kernel_for) const {
    const bfly::lda::Corpus heldout = documents_of(heldout_offsets, heldout_words, corpus_->vocab);
    const bfly::lda::Corpus reference = documents_of(reference_offsets, reference_words, corpus_->vocab);
    bfly::lda::EvaluationOptions options;
    options.inference = {iterations, burn_in, seed, threads};
    options.top_words = top_words;
    const bfly::lda::Evaluation e = std::visit(
        [&](const auto& t) {
          using T = ElementOf<std::decay_t<decltype(t)>>;
          const bfly::lda::Model model = bfly::lda::model_of(*t);
          // As bfly::lda::evaluate: the kernel's width follows the observed halves, the documents it sees.
          const auto zstep = inference_zstep<T>(model, bfly::lda::split_for_completion(heldout).observed, device,
                                                threads, cpu_kernel_for);
          nb::gil_scoped_release unlocked;
          return bfly::lda::evaluate_with<T>(model, heldout, reference, options, *zstep);
        },
        trainer_);
    nb::dict d;
    d["documents"] = e.documents;
    d["scored_tokens"] = e.scored_tokens;
    d["log_likelihood"] = e.log_likelihood;
    d["perplexity"] = e.perplexity;
    d["top_words"] = e.top_words;
    d["reference_documents"] = e.reference_documents;
    d["topic_npmi"] = e.topic_npmi;
    d["npmi"] = e.npmi;
    d["seconds"] = e.seconds;
    d["engine"] = e.engine;
    return d;
  }

  // Each topic's NPMI coherence of its top `top_words` words over the reference documents (no inference).
  std::vector<double> topic_npmi(DocOffsets reference_offsets, WordIds reference_words, int top_words) const {
    const bfly::lda::Corpus reference = documents_of(reference_offsets, reference_words, corpus_->vocab);
    return std::visit(
        [&](const auto& t) {
          return bfly::lda::topic_npmi(bfly::lda::top_words(bfly::lda::model_of(*t), top_words), reference);
        },
        trainer_);
  }

 private:
  template <typename T>
  using TrainerPtr = std::unique_ptr<bfly::lda::Trainer<T>>;

  // GPU when asked or available ("auto"), else the GPU's generated z-step kernel on the CPU, compiled at run time
  // by cpu_kernel_for(spec) (a CpuKernelLibrary); with a checkpoint, the run it saved resumes.
  template <typename T>
  TrainerPtr<T> make_trainer(const bfly::lda::TrainerOptions& options, const std::string& device,
                             const std::optional<std::string>& checkpoint, nb::object cpu_kernel_for) {
    std::unique_ptr<bfly::lda::IterationEngine<T>> engine;
    std::string why;
    if (device != "auto" && device != "gpu" && device != "cpu")
      throw bfly::Error(fmt::format("device = '{}'; it must be 'auto', 'gpu' or 'cpu'", device));
    if (device == "gpu" || (device == "auto" && bfly::lda::gpu_available(&why))) {
      engine = bfly::lda::gpu_engine<T>();
    } else {
      const KernelSpec spec = bfly::lda::gpu_z_spec<T>(options.topics, {}, bfly::lda::mean_document_length(*corpus_));
      library_owner_ = cpu_kernel_for(spec);
      library_ = nb::cast<CpuKernelLibrary*>(library_owner_);
      engine = bfly::lda::cpu_engine<T>(
          std::make_unique<bfly::lda::GeneratedCpuZStep<T>>(library_->compiled(), options.threads));
    }
    if (checkpoint)
      return std::make_unique<bfly::lda::Trainer<T>>(
          bfly::lda::Trainer<T>::resume(*corpus_, *checkpoint, options.threads, std::move(engine)));
    return std::make_unique<bfly::lda::Trainer<T>>(*corpus_, options, std::move(engine));
  }

  template <typename V>
  nb::ndarray<nb::numpy, double, nb::ndim<2>> to_numpy(const std::vector<V>& values, std::int64_t rows) const {
    const std::size_t cols = values.size() / static_cast<std::size_t>(rows > 0 ? rows : 1);
    auto* copy = new double[values.size()];
    for (std::size_t i = 0; i < values.size(); ++i) copy[i] = static_cast<double>(values[i]);
    nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return nb::ndarray<nb::numpy, double, nb::ndim<2>>(copy, {static_cast<std::size_t>(rows), cols}, owner);
  }

  std::unique_ptr<bfly::lda::Corpus> corpus_;
  std::variant<TrainerPtr<float>, TrainerPtr<double>> trainer_;
  CpuKernelLibrary* library_ = nullptr;
  nb::object library_owner_;  // keeps the CPU kernel's library alive while the engine runs it
};

}  // namespace

NB_MODULE(_bfly, m) {
  m.doc() = "bfly's compiled core: specs, generator, NVRTC inspection, GPU launches, CPU kernels, LDA trainer.";
  nb::exception<bfly::Error>(m, "Error", PyExc_RuntimeError);

  m.def("version", [] { return std::string(bfly::gen::bfly_version()); });
  m.def("gpu_available", [] {
    std::string why;
    const bool ok = bfly::rt::gpu_available(&why);
    return std::make_tuple(ok, why);
  });
  m.def("element_size", [](const std::string& type) { return bfly::gen::size_of(parse_type(type)); });
  m.def("max_categories", [] { return KernelSpec::kMaxK; });
  // The element types' tags in the order of their indices (bfly::gen::kElementTypes): "f32", "f64", "f16", "bf16".
  m.def("element_type_tags", [] {
    std::vector<std::string> tags;
    for (const auto& t : bfly::gen::kElementTypes) tags.emplace_back(t.tag);
    return tags;
  });

  nb::class_<KernelSpec>(m, "KernelSpec")
      .def_ro("W", &KernelSpec::W)
      .def_ro("K", &KernelSpec::K)
      .def_ro("R", &KernelSpec::R)
      .def_prop_ro("type", [](const KernelSpec& s) { return std::string(bfly::gen::name_of(s.type)); })
      .def_prop_ro("variant", [](const KernelSpec& s) { return std::string(bfly::gen::name_of(s.variant)); })
      .def_prop_ro("operation", [](const KernelSpec& s) { return std::string(bfly::gen::name_of(s.operation)); })
      .def_prop_ro("name", [](const KernelSpec& s) { return bfly::gen::kernel_name(s); })
      .def("describe", [](const KernelSpec& s) { return bfly::gen::describe(s); })
      .def("__eq__", [](const KernelSpec& a, const KernelSpec& b) { return a == b; })
      .def("__repr__", [](const KernelSpec& s) { return fmt::format("KernelSpec({})", bfly::gen::describe(s)); });

  m.def("sample_spec", &sample_spec, "K"_a, "type"_a, "W"_a = nb::none(), "variant"_a = nb::none(),
        "R"_a = nb::none(), "M"_a = 0);
  m.def("parse_kernel_name", [](const std::string& name) {
    KernelSpec spec = bfly::gen::parse_kernel_name(name);
    spec.validate();
    return spec;
  });
  // generate: (kernel name, source as NVRTC receives it, source with the fragments pasted in, family, description)
  m.def("generate", [](const KernelSpec& spec) {
    const bfly::gen::Source source = bfly::gen::generate(spec);
    return std::make_tuple(source.kernel_name, source.text, bfly::gen::inline_headers(source), source.family,
                           bfly::gen::describe(source));
  });
  m.def("cpu_translation_unit", &cpu_translation_unit);

  // inspect: compile through the kernel cache for `arch` (None: the current device) and report.
  m.def(
      "inspect",
      [](const KernelSpec& spec, std::optional<std::string> arch) {
        bfly::rt::KernelReport r;
        {
          nb::gil_scoped_release unlocked;
          r = bfly::rt::inspect(spec, arch);
        }
        nb::dict d;
        d["kernel_name"] = r.kernel_name;
        d["description"] = r.description;
        d["arch"] = r.arch.option();
        d["options"] = r.options;
        d["resources_known"] = r.resources.known;
        d["registers"] = r.resources.registers;
        d["spill_store_bytes"] = r.resources.spill_store_bytes;
        d["spill_load_bytes"] = r.resources.spill_load_bytes;
        d["local_bytes"] = r.resources.local_bytes;
        d["static_shared_bytes"] = r.resources.static_shared_bytes;
        d["cache_entry"] = r.cache_entry;
        d["cache_level"] = std::string(bfly::rt::name_of(r.level));
        d["text"] = bfly::rt::format_report(r);
        return d;
      },
      "spec"_a, "arch"_a = nb::none());
  m.def("cache_directory", [] {
    const auto dir = bfly::rt::cache_directory();
    return dir ? std::optional<std::string>(dir->string()) : std::nullopt;
  });

  nb::class_<CpuKernelLibrary>(m, "CpuKernelLibrary")
      .def(nb::init<const std::string&, const KernelSpec&>(), "path"_a, "spec"_a)
      .def_prop_ro("spec", &CpuKernelLibrary::spec)
      .def("run", &CpuKernelLibrary::run, "call"_a, "out"_a, "workers"_a);

  bind_sampling(m);  // bfly.sample's checks and GPU launches (sampling.cpp)
  bind_dlpack(m);  // JAX and other DLPack arrays on the GPU (dlpack.cpp)

  nb::class_<LdaModel>(m, "LdaModel")
      .def(nb::init<nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>,
                    nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>,
                    nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>,
                    std::vector<std::string>, std::int64_t, const std::string&, int, double, double, std::uint64_t,
                    const std::string&, int, const std::string&, std::optional<std::string>, nb::object>(),
           "doc_offsets"_a, "words"_a, "doc_ids"_a, "vocab"_a, "input_documents"_a, "type"_a, "topics"_a, "alpha"_a,
           "beta"_a, "seed"_a, "estimate"_a, "threads"_a, "device"_a, "checkpoint"_a.none(), "cpu_kernel_for"_a)
      .def_prop_ro("engine", &LdaModel::engine)
      .def_prop_ro("estimate", &LdaModel::estimate)
      .def_prop_ro("iteration", &LdaModel::iteration)
      .def_prop_ro("ll_per_token", &LdaModel::ll_per_token)
      .def("step", &LdaModel::step)
      .def("save_checkpoint", &LdaModel::save_checkpoint)
      .def("phi", &LdaModel::phi)
      .def("add_means_to_average", &LdaModel::add_means_to_average)
      .def("clear_average", &LdaModel::clear_average)
      .def("restore_average", &LdaModel::restore_average, "theta"_a, "phi"_a)
      .def("theta", &LdaModel::theta)
      .def("word_topic_counts", &LdaModel::word_topic_counts)
      .def("top_words", &LdaModel::top_words)
      .def("write_outputs", &LdaModel::write_outputs, "dir"_a, "top_words"_a)
      .def("infer", &LdaModel::infer, "doc_offsets"_a, "words"_a, "iterations"_a, "burn_in"_a, "seed"_a,
           "threads"_a, "device"_a, "cpu_kernel_for"_a)
      .def("evaluate", &LdaModel::evaluate, "heldout_offsets"_a, "heldout_words"_a, "reference_offsets"_a,
           "reference_words"_a, "iterations"_a, "burn_in"_a, "seed"_a, "threads"_a, "top_words"_a, "device"_a,
           "cpu_kernel_for"_a)
      .def("topic_npmi", &LdaModel::topic_npmi, "reference_offsets"_a, "reference_words"_a, "top_words"_a);
}
