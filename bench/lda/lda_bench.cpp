// lda-bench: the LDA z-step and the full uncollapsed Gibbs iteration on one corpus (normally the paper-shaped one of
// scripts/lda/make_paper_corpus.py), for a sweep of K (Figure 11 of the paper) and f32/f64:
//   bfly-<variant>-w<W>   the generated butterfly kernels through bfly::rt::LdaZStep
//   alg1, alg4            the paper's baselines, generated for each K and type like bfly's kernels
//                         (gen::generate_lda_baseline, through bfly::rt::LdaBaselineStep)
// and the rest of the iteration (counts, theta, phi, log-likelihood: bfly::rt::LdaIteration). Every algorithm runs
// on the same device arrays in the same process; theta and phi are the posterior means of a random z. Times are
// medians of CUDA-event-timed runs after warm-up; the uniform stream changes from run to run (iteration number).
// Each baseline's topics are compared with bfly's (only rounding near a boundary may differ).
// CSV: device,date,algorithm,type,K,tokens,zstep_ms,iteration_ms,mtokens_per_s,read_ceiling_gbps where
// iteration_ms = zstep_ms + the median of (counts + theta + phi + log-likelihood, read back), i.e. what one
// iteration of bfly-lda costs with that z-step; mtokens_per_s is tokens / zstep time.
#include "../baselines.hpp"
#include "../compile_all.hpp"
#include "bfly/output_file.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/ops/lda_baseline_step.hpp"
#include "bfly/ops/lda_iteration.hpp"
#include "bfly/ops/lda_z_step.hpp"
#include "bfly/lda/corpus.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

#define CUDA_CHECK(call)                                                                                  \
  do {                                                                                                    \
    const cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", #call, cudaGetErrorString(e_))); \
  } while (0)

struct Options {
  std::string docword, vocab, out_dir = "bench/results";
  std::vector<int> Ks;
  std::vector<std::string> types = {"f32", "f64"};
  bool all_variants = true;
  int runs = 10, warmup = 2;
  bool quick = false;
};

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) values.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

const char* kUsage =
    "usage: lda-bench --docword FILE --vocab FILE [options]\n"
    "  --quick            K in {16, 64, 256, 1024} (default: K = 4, 8, ..., 1024, Figure 11's sweep)\n"
    "  --K LIST           comma-separated K values (overrides the sweep)\n"
    "  --types LIST       f32,f64 (default both)\n"
    "  --variants all|default   bfly kernels: both layouts (lda_z_doc, lda_z) x W in {8,16,32} x {swap,addsub}\n"
    "                     plus the default spec (all; the default for --quick and --K), or the default spec plus\n"
    "                     w32-addsub of each layout (default for the sweep)\n"
    "  --runs N           timed runs per point (default 10), --warmup N (default 2)\n"
    "  --out-dir DIR      where <device>-<date>-lda.csv goes (default bench/results; a later run of the day\n"
    "                     writes <device>-<date>-2-lda.csv and so on)\n";

Options parse(int argc, char** argv) {
  Options o;
  std::optional<bool> variants;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--docword") o.docword = value();
    else if (a == "--vocab") o.vocab = value();
    else if (a == "--quick") o.quick = true;
    else if (a == "--K") o.Ks = parse_list(value());
    else if (a == "--types") {
      const std::string t = value();
      o.types.clear();
      if (t.find("f32") != std::string::npos) o.types.push_back("f32");
      if (t.find("f64") != std::string::npos) o.types.push_back("f64");
    } else if (a == "--variants") variants = value() == "all";
    else if (a == "--runs") o.runs = std::max(1, std::stoi(value()));
    else if (a == "--warmup") o.warmup = std::max(0, std::stoi(value()));
    else if (a == "--out-dir") o.out_dir = value();
    else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else throw std::runtime_error("unknown argument " + a + "\n" + kUsage);
  }
  if (o.docword.empty() || o.vocab.empty()) throw std::runtime_error(std::string("--docword and --vocab are required\n") + kUsage);
  if (o.Ks.empty()) {
    if (o.quick) o.Ks = {16, 64, 256, 1024};
    else
      for (int K = 4; K <= 1024; K += 4) o.Ks.push_back(K);
  }
  o.all_variants = variants.value_or(o.quick || o.Ks.size() <= 8);
  return o;
}

std::string today() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof(text), "%Y-%m-%d", std::localtime(&now));
  return text;
}

std::string device_slug(const std::string& name) {  // as bfly-bench names its files
  std::string slug;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  if (slug.rfind("nvidia-", 0) == 0) slug = slug.substr(7);
  return slug.empty() ? "gpu" : slug;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median of `runs` event-timed calls of launch(run) after `warmup` untimed ones.
double time_ms(const std::function<void(int)>& launch, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) launch(i);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < runs; ++i) {
    CUDA_CHECK(cudaEventRecord(start, 0));
    launch(warmup + i);
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return median(ms);
}

// Median host wall time of `body` (which must synchronize), after `warmup` calls.
double wall_ms(const std::function<void(int)>& body, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) body(i);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body(warmup + i);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return median(ms);
}

template <typename V>
struct DeviceArray {
  V* data = nullptr;
  std::size_t count = 0;
  explicit DeviceArray(std::size_t n) : count(n) { CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(n, 1) * sizeof(V))); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data); }
  std::vector<V> download() const {
    std::vector<V> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(V), cudaMemcpyDeviceToHost));
    return host;
  }
};

struct Row {
  std::string algorithm, type;
  int K = 0;
  double zstep_ms = 0, iteration_ms = 0;
};

struct Corpus {
  long long D = 0, V = 0, tokens = 0;
  const long long* offsets = nullptr;
  const int* words = nullptr;
};

// bfly-<variant>-w<W> for the paper's lane-per-document kernel (lda_z), bfly-doc-<variant>-w<W> for lda_z_doc.
std::string algorithm_name(const bfly::gen::KernelSpec& spec) {
  return fmt::format("bfly-{}{}-w{}", spec.operation == bfly::gen::Operation::lda_z_doc ? "doc-" : "",
                     bfly::gen::name_of(spec.variant), spec.W);
}

// The bfly kernels timed at every K: the default spec (LdaZStep's choice) first, then with --variants all both
// layouts x W in {8, 16, 32} x {swap, addsub}; otherwise W = 16 and 32 addsub of lda_z_doc and W = 32 addsub of
// the paper's lda_z (its best in the 2026-11-22 sweep).
std::vector<bfly::rt::LdaZOptions> bfly_configs(const Options& o) {
  using bfly::gen::Operation;
  using bfly::gen::Variant;
  std::vector<bfly::rt::LdaZOptions> configs{bfly::rt::LdaZOptions{}};
  const auto add = [&](Operation operation, int W, Variant variant) {
    bfly::rt::LdaZOptions options;
    options.operation = operation;
    options.W = W;
    options.variant = variant;
    configs.push_back(options);
  };
  if (o.all_variants) {
    for (const Operation operation : {Operation::lda_z_doc, Operation::lda_z})
      for (const int W : {8, 16, 32})
        for (const Variant variant : {Variant::swap, Variant::addsub}) add(operation, W, variant);
  } else {
    add(Operation::lda_z_doc, 16, Variant::addsub);
    add(Operation::lda_z_doc, 32, Variant::addsub);
    add(Operation::lda_z, 32, Variant::addsub);
  }
  return configs;
}

// The paper's baselines timed at every K, with their CSV names.
constexpr std::pair<const char*, bfly::gen::LdaBaseline> kBaselines[] = {{"alg1", bfly::gen::LdaBaseline::alg1},
                                                                         {"alg4", bfly::gen::LdaBaseline::alg4}};

// Every kernel the run will load (bfly's and the baselines), compiled first on all cores through the cache (a K's
// spec that cannot be made is skipped here and reported when its point is run).
void precompile(const Options& o) {
  std::vector<bfly::gen::KernelSpec> specs;
  std::vector<bfly::gen::LdaBaselineSpec> baselines;
  for (const std::string& type : o.types)
    for (const int K : o.Ks) {
      const auto element = type == "f32" ? bfly::gen::ElementType::f32 : bfly::gen::ElementType::f64;
      for (const bfly::rt::LdaZOptions& config : bfly_configs(o)) {
        try {
          const bfly::gen::KernelSpec spec = bfly::gen::choose_lda_z_spec(K, element, config);
          if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
        } catch (const std::exception&) {
        }
      }
      for (const auto& [name, algorithm] : kBaselines) baselines.push_back({algorithm, K, element});
    }
  const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bench::compile_all(specs, baselines, bfly::rt::current_device_arch(), jobs, false);
}

template <typename T>
void run_type(const Options& o, const Corpus& c, std::vector<Row>& rows, const std::function<void()>& save) {
  const char* type = sizeof(T) == 4 ? "f32" : "f64";
  const auto element = sizeof(T) == 4 ? bfly::gen::ElementType::f32 : bfly::gen::ElementType::f64;
  const unsigned long long seed = 20191111ull;
  for (const int K : o.Ks) {
    DeviceArray<T> theta(static_cast<std::size_t>(c.D) * K), phi(static_cast<std::size_t>(c.V) * K);
    DeviceArray<T> p(static_cast<std::size_t>(c.D) * K);
    DeviceArray<int> z(static_cast<std::size_t>(c.tokens)), z_reference(static_cast<std::size_t>(c.tokens));
    bench::random_topics(z.data, c.tokens, K, seed + K, nullptr);
    bfly::rt::LdaIteration rest(bfly::rt::LdaShape{c.D, c.V, c.tokens, K}, element);
    const bfly::rt::LdaPriors priors{.alpha = 0.1, .beta = 0.01};
    rest.count(c.offsets, c.words, z.data);
    rest.estimate(c.offsets, priors, bfly::rt::LdaEstimate::mean, seed, 0, theta.data, phi.data);
    const double ll = rest.log_likelihood();

    // The rest of an iteration, as the trainer runs it (ends with the log-likelihood read back).
    const double rest_ms = wall_ms(
        [&](int run) {
          rest.count(c.offsets, c.words, z.data);
          rest.estimate(c.offsets, priors, bfly::rt::LdaEstimate::mean, seed, static_cast<unsigned>(run + 1),
                        theta.data, phi.data);
          (void)rest.log_likelihood();
        },
        o.warmup, o.runs);
    // Where the rest goes: the counts (zeroing n_dk, n_wk, n_k and the atomics) and the estimates (theta, phi and
    // the log-likelihood terms), each timed alone with events.
    const double count_ms = time_ms([&](int) { rest.count(c.offsets, c.words, z.data); }, o.warmup, o.runs);
    const double estimate_ms = time_ms(
        [&](int run) {
          rest.estimate(c.offsets, priors, bfly::rt::LdaEstimate::mean, seed, static_cast<unsigned>(run + 1),
                        theta.data, phi.data);
        },
        o.warmup, o.runs);
    // The estimates again from the starting z, so every z-step below sees the same theta and phi.
    rest.count(c.offsets, c.words, z.data);
    rest.estimate(c.offsets, priors, bfly::rt::LdaEstimate::mean, seed, 0, theta.data, phi.data);
    CUDA_CHECK(cudaDeviceSynchronize());

    // The bfly kernels: the default spec first (the reference of the topic comparison), then the sweep set.
    const std::vector<bfly::rt::LdaZOptions> configs = bfly_configs(o);
    std::vector<std::string> seen;
    bool have_reference = false;
    auto compare = [&](const std::string& name) {
      const std::vector<int> a = z.download(), b = z_reference.download();
      long long differ = 0, out_of_range = 0;
      for (std::size_t t = 0; t < a.size(); ++t) {
        differ += a[t] != b[t];
        out_of_range += a[t] < 0 || a[t] >= K;
      }
      if (out_of_range > 0 || differ > static_cast<long long>(a.size()) / 1000)
        std::printf("  WARNING %s: %lld topics out of range, %lld of %zu differ from the default bfly kernel\n",
                    name.c_str(), out_of_range, differ, a.size());
      return differ;
    };
    for (const auto& config : configs) {
      bfly::gen::KernelSpec spec;
      std::optional<bfly::rt::LdaZStep> step;
      try {
        spec = bfly::gen::choose_lda_z_spec(K, element, config);
        if (std::find(seen.begin(), seen.end(), bfly::gen::kernel_name(spec)) != seen.end()) continue;
        seen.push_back(bfly::gen::kernel_name(spec));
        bfly::rt::LdaZOptions timed = config;
        timed.report_invalid_tokens = false;  // no read-back inside the timed region
        step.emplace(timed);
        step->run(theta.data, K, phi.data, K, c.offsets, c.words, z.data, c.D, K, seed, 1);  // compile + load
      } catch (const std::exception& e) {
        std::printf("  skip W=%d %s at K=%d: %s\n", config.W.value_or(0),
                    config.variant ? std::string(bfly::gen::name_of(*config.variant)).c_str() : "", K, e.what());
        continue;
      }
      const double ms = time_ms(
          [&](int run) {
            step->run(theta.data, K, phi.data, K, c.offsets, c.words, z.data, c.D, K, seed,
                      static_cast<unsigned>(run + 1));
          },
          o.warmup, o.runs);
      step->run(theta.data, K, phi.data, K, c.offsets, c.words, z.data, c.D, K, seed, 1);
      CUDA_CHECK(cudaDeviceSynchronize());
      long long differ = 0;
      if (!have_reference) {
        CUDA_CHECK(cudaMemcpy(z_reference.data, z.data, z.count * sizeof(int), cudaMemcpyDeviceToDevice));
        have_reference = true;
      } else {
        differ = compare(algorithm_name(spec));
      }
      rows.push_back({algorithm_name(spec), type, K, ms, ms + rest_ms});
      std::printf("%s K=%4d %-18s z-step %8.3f ms %8.1f Mtok/s  (%s%s; %lld topics differ)\n", type, K,
                  algorithm_name(spec).c_str(), ms, c.tokens / ms * 1e-3, bfly::gen::kernel_name(spec).c_str(),
                  config.W ? "" : ", default", differ);
    }

    // The paper's baselines, generated for this K and type and loaded from the cache (precompile built them).
    for (const auto& [name, algorithm] : kBaselines) {
      std::optional<bfly::rt::LdaBaselineStep> baseline;
      try {
        baseline.emplace(bfly::gen::LdaBaselineSpec{algorithm, K, element});
      } catch (const std::exception& e) {
        std::printf("  skip %s at K=%d: %s\n", name, K, e.what());
        continue;
      }
      const auto run_baseline = [&](unsigned iteration) {
        baseline->run(theta.data, K, phi.data, K, c.offsets, c.words, z.data, c.D, p.data, seed, iteration);
      };
      const double ms = time_ms([&](int run) { run_baseline(static_cast<unsigned>(run + 1)); }, o.warmup, o.runs);
      run_baseline(1);
      CUDA_CHECK(cudaDeviceSynchronize());
      const long long differ = have_reference ? compare(name) : 0;
      rows.push_back({name, type, K, ms, ms + rest_ms});
      std::printf("%s K=%4d %-18s z-step %8.3f ms %8.1f Mtok/s  (%s; %lld topics differ)\n", type, K, name, ms,
                  c.tokens / ms * 1e-3, baseline->kernel_name().c_str(), differ);
    }

    // One whole iteration as bfly-lda runs it (default kernel, invalid-token count and log-likelihood read back).
    bfly::rt::LdaZStep step;
    const double iteration_ms = wall_ms(
        [&](int run) {
          const unsigned t = static_cast<unsigned>(run + 1);
          step.run(theta.data, K, phi.data, K, c.offsets, c.words, z.data, c.D, K, seed, t);
          rest.count(c.offsets, c.words, z.data);
          rest.estimate(c.offsets, priors, bfly::rt::LdaEstimate::mean, seed, t, theta.data, phi.data);
          (void)rest.log_likelihood();
        },
        o.warmup, o.runs);
    std::printf("%s K=%4d rest of the iteration %.3f ms (counts %.3f ms, estimates %.3f ms, events); whole iteration "
                "(default kernel, end to end) %.3f ms = %.1f Mtok/s; ll/token at start %.4f\n",
                type, K, rest_ms, count_ms, estimate_ms, iteration_ms, c.tokens / iteration_ms * 1e-3,
                ll / c.tokens);
    std::fflush(stdout);
    save();  // after every K, so a sweep stopped early keeps what it measured
  }
}

double measure_read_ceiling(int multiprocessors) {
  const std::size_t bytes = 1ull << 30;
  DeviceArray<char> buffer(bytes);
  CUDA_CHECK(cudaMemset(buffer.data, 1, bytes));
  DeviceArray<float> sink(static_cast<std::size_t>(bench::read_ceiling_sink_size(multiprocessors, 8)));
  const double ms = time_ms([&](int) { bench::read_ceiling(buffer.data, bytes, sink.data, multiprocessors, 8, nullptr); },
                            3, 20);
  return static_cast<double>(bytes) / (ms * 1e-3) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(nullptr));  // the primary context, which bfly's runtime then shares
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const std::string device = device_slug(prop.name), date = today();

    const auto start = std::chrono::steady_clock::now();
    const bfly::lda::Corpus corpus = bfly::lda::sort_by_length(bfly::lda::read_uci(o.docword, o.vocab));
    std::printf("corpus: %lld documents, %d words, %lld tokens, longest %lld (read in %.1f s); device %s, %d SMs\n",
                static_cast<long long>(corpus.num_docs()), corpus.vocab_size(),
                static_cast<long long>(corpus.num_tokens()), static_cast<long long>(corpus.max_doc_length()),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), prop.name,
                prop.multiProcessorCount);
    DeviceArray<long long> offsets(corpus.doc_offsets.size());
    DeviceArray<int> words(corpus.words.size());
    CUDA_CHECK(cudaMemcpy(offsets.data, corpus.doc_offsets.data(), offsets.count * sizeof(long long),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(words.data, corpus.words.data(), words.count * sizeof(int), cudaMemcpyHostToDevice));
    const Corpus c{corpus.num_docs(), corpus.vocab_size(), corpus.num_tokens(), offsets.data, words.data};

    const double read_gbps = measure_read_ceiling(prop.multiProcessorCount);
    std::printf("read ceiling: %.0f GB/s\n", read_gbps);

    precompile(o);
    std::vector<Row> rows;
    // A second run of the day writes <device>-<date>-2-lda.csv and so on: an earlier run's file is kept.
    const std::string path = bfly::create_unused_file(o.out_dir, fmt::format("{}-{}", device, date), "-lda.csv");
    std::printf("writing %s\n", path.c_str());
    const auto save = [&] {  // the whole CSV so far, replaced atomically
      bfly::OutputFile csv(path);
      csv.text("device,date,algorithm,type,K,tokens,zstep_ms,iteration_ms,mtokens_per_s,read_ceiling_gbps\n");
      for (const Row& r : rows)
        csv.text(fmt::format("{},{},{},{},{},{},{:.5f},{:.5f},{:.2f},{:.1f}\n", device, date, r.algorithm, r.type,
                             r.K, c.tokens, r.zstep_ms, r.iteration_ms, c.tokens / r.zstep_ms * 1e-3, read_gbps));
      csv.commit();
    };
    for (const std::string& type : o.types) {
      if (type == "f32") run_type<float>(o, c, rows, save);
      else run_type<double>(o, c, rows, save);
    }
    std::printf("wrote %s (%zu rows)\n", path.c_str(), rows.size());

    // The closing summary: z-step ms and Mtokens/s at K = 16, 256, 1024.
    std::printf("\n%-5s %-16s %6s %10s %10s %12s\n", "type", "algorithm", "K", "zstep_ms", "Mtok/s", "iter_ms");
    for (const Row& r : rows)
      if (r.K == 16 || r.K == 256 || r.K == 1024)
        std::printf("%-5s %-16s %6d %10.3f %10.1f %12.3f\n", r.type.c_str(), r.algorithm.c_str(), r.K, r.zstep_ms,
                    c.tokens / r.zstep_ms * 1e-3, r.iteration_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lda-bench: %s\n", e.what());
    return 1;
  }
}
