// LdaIteration: the kernels of templates/bfly/lda_iteration.cuh (one module per element type, through the cache),
// their buffers, and the launches of count -> theta -> phi -> log-likelihood.
#include "bfly/ops/lda_iteration.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/cache.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <string>

namespace bfly::rt {
namespace {

constexpr int kRowThreads = 256;           // kWarpsPerBlock (8) warps, one per document or word row
constexpr int kSharedTopicsMax = 12288;    // n_k histogram in 48 KiB of dynamic shared memory up to this K
constexpr long long kRowsPerChunk = 256;   // rows per column-sum partial (Dirichlet draws of phi)
// Counts below this have their log-likelihood term lgamma(n + prior) - lgamma(prior) looked up in a table made
// per prior (bfly_lda_lgamma_table) instead of calling lgamma on the one or two lanes of a warp that hold a non-zero
// count (H100, K = 1024 f32: the theta kernel took 0.65 ms, the phi kernel 0.28 ms; bench/lda/NOTES.md).
constexpr int kCountTerms = 1024;

CUfunction function(const Module& module, const std::string& name) {
  CUfunction f = nullptr;
  check(driver().ModuleGetFunction(&f, module.get(), name.c_str()), fmt::format("cuModuleGetFunction({})", name));
  return f;
}

void launch(CUfunction f, const char* name, long long grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            unsigned shared, CUstream stream, void** arguments) {
  if (grid_x < 1) grid_x = 1;
  check(driver().LaunchKernel(f, static_cast<unsigned>(grid_x), grid_y, 1, block_x, block_y, 1, shared, stream,
                              arguments, nullptr),
        fmt::format("cuLaunchKernel({}, {} x {} CTAs)", name, grid_x, grid_y));
}

int multiprocessors() {
  current_context();
  CUdevice device = 0;
  check(driver().CtxGetDevice(&device), "cuCtxGetDevice");
  int count = 0;
  check(driver().DeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  return std::max(count, 1);
}

template <typename T>
CUdeviceptr ptr(T* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

}  // namespace

// The one source text of the kernels of `type`: the template file and the instantiation lines that choose the
// element type (nothing else is written here).
gen::Source lda_iteration_source(gen::ElementType type) {
  gen::Source source;
  source.spec.type = type;
  source.spec.K = 1;
  source.spec.W = 4;
  source.spec.R = 0;
  source.spec.operation = gen::Operation::lda_z;
  source.kernel_name = fmt::format("bfly_lda_iteration_{}", gen::name_of(type));
  source.text = fmt::format(
      "// {}: the LDA iteration kernels of bfly/lda_iteration.cuh for {} (bfly {}); made by "
      "bfly::rt::LdaIteration, do not edit.\n"
      "#include \"bfly/lda_iteration.cuh\"\n"
      "BFLY_LDA_ITERATION_COMMON_KERNELS()\n"
      "BFLY_LDA_ITERATION_TYPED_KERNELS({}, {})\n",
      source.kernel_name, gen::name_of(type), gen::bfly_version(), gen::cuda_type(type), gen::name_of(type));
  source.headers = {"bfly/lda_iteration.cuh", "bfly/philox.cuh"};
  return source;
}

struct LdaIteration::State {
  std::shared_ptr<const Module> module;
  CUfunction zero = nullptr, count = nullptr, phi_gammas = nullptr, column_partials = nullptr, lgamma_table = nullptr,
             column_finish = nullptr, finish_ll = nullptr, theta = nullptr, phi_mean = nullptr,
             normalize_phi = nullptr;
  DeviceBuffer doc_topic, word_topic, topic, bad, ll_partials, ll_result;
  DeviceBuffer alpha_terms, beta_terms;  // kCountTerms log-likelihood terms of each prior, made by every estimate()
  DeviceBuffer gammas, column_partial, column_sum;  // allocated on the first Dirichlet draw of phi
  long long count_grid = 0, theta_grid = 0, phi_grid = 0;
};

LdaIteration::LdaIteration(const LdaShape& shape, gen::ElementType type)
    : shape_(shape), type_(type), state_(std::make_unique<State>()) {
  if (shape.K < 1 || shape.K > 65536)
    throw Error(fmt::format("LdaIteration: K = {} is out of range; K must be in 1 .. 65536", shape.K));
  if (shape.docs < 0 || shape.vocab < 1 || shape.tokens < 0 || shape.tokens >= INT_MAX)
    throw Error(fmt::format("LdaIteration: bad corpus sizes D = {}, V = {}, tokens = {} (need D >= 0, V >= 1, "
                            "0 <= tokens < 2^31)",
                            shape.docs, shape.vocab, shape.tokens));
  State& s = *state_;
  const CacheLookup lookup = default_cache().get(lda_iteration_source(type), default_compile_options(current_device_arch()));
  s.module = std::make_shared<const Module>(*lookup.kernel);
  const std::string tag(gen::name_of(type));
  s.zero = function(*s.module, "bfly_lda_zero");
  s.lgamma_table = function(*s.module, "bfly_lda_lgamma_table");
  s.count = function(*s.module, "bfly_lda_count");
  s.phi_gammas = function(*s.module, "bfly_lda_phi_gammas");
  s.column_partials = function(*s.module, "bfly_lda_column_partials");
  s.column_finish = function(*s.module, "bfly_lda_column_finish");
  s.finish_ll = function(*s.module, "bfly_lda_finish_ll");
  s.theta = function(*s.module, "bfly_lda_theta_" + tag);
  s.phi_mean = function(*s.module, "bfly_lda_phi_mean_" + tag);
  s.normalize_phi = function(*s.module, "bfly_lda_normalize_phi_" + tag);

  const long long K = shape.K, sms = multiprocessors();
  const long long warps_per_block = kRowThreads / 32;
  // Grids are fixed per device, so the partial sums (and the log-likelihood) are formed in the same order on
  // every call.
  // (The count kernel's grid: 32 blocks per SM instead of 4 made it slower, 0.27 against 0.23 ms at K = 1024 on an
  // H100, although ncu showed it at 4% of the SMs' throughput: its atomics, not its warps, limit it.)
  s.count_grid = std::clamp((shape.docs + warps_per_block - 1) / warps_per_block, 1ll, sms * 4);
  s.theta_grid = std::clamp((shape.docs + warps_per_block - 1) / warps_per_block, 1ll, sms * 16);
  s.phi_grid = std::clamp((shape.vocab + warps_per_block - 1) / warps_per_block, 1ll, sms * 16);
  s.doc_topic = DeviceBuffer(static_cast<std::size_t>(std::max(1ll, shape.docs * K)) * sizeof(int));
  s.word_topic = DeviceBuffer(static_cast<std::size_t>(shape.vocab * K) * sizeof(int));
  s.topic = DeviceBuffer(static_cast<std::size_t>(K) * sizeof(int));
  s.bad = DeviceBuffer(sizeof(unsigned long long));
  s.ll_partials = DeviceBuffer(static_cast<std::size_t>(s.theta_grid + s.phi_grid) * sizeof(double));
  s.ll_result = DeviceBuffer(sizeof(double));
  s.alpha_terms = DeviceBuffer(kCountTerms * sizeof(double));
  s.beta_terms = DeviceBuffer(kCountTerms * sizeof(double));
}

LdaIteration::LdaIteration(LdaIteration&&) noexcept = default;
LdaIteration& LdaIteration::operator=(LdaIteration&&) noexcept = default;
LdaIteration::~LdaIteration() = default;

const int* LdaIteration::doc_topic() const { return reinterpret_cast<const int*>(state_->doc_topic.get()); }
const int* LdaIteration::word_topic() const { return reinterpret_cast<const int*>(state_->word_topic.get()); }
const int* LdaIteration::topic() const { return reinterpret_cast<const int*>(state_->topic.get()); }

void LdaIteration::count(const long long* doc_offsets, const int* words, const int* z, CUstream_st* stream) {
  State& s = *state_;
  if (shape_.docs > 0 && (doc_offsets == nullptr || (shape_.tokens > 0 && (words == nullptr || z == nullptr))))
    throw Error("LdaIteration::count: doc_offsets, words and z must be device arrays (one is null)");
  const long long K = shape_.K;
  for (const auto& [buffer, n] : {std::pair{&s.doc_topic, shape_.docs * K}, std::pair{&s.word_topic, shape_.vocab * K},
                                  std::pair{&s.topic, K}, std::pair{&s.bad, 2ll}}) {
    CUdeviceptr data = buffer->get();
    long long count = n;
    void* arguments[] = {&data, &count};
    launch(s.zero, "bfly_lda_zero", std::min((n + 255) / 256, 65536ll), 1, 256, 1, 0, stream, arguments);
  }
  if (shape_.docs == 0) return;
  CUdeviceptr offsets_arg = ptr(doc_offsets), words_arg = ptr(words), z_arg = ptr(z);
  CUdeviceptr n_dk = s.doc_topic.get(), n_wk = s.word_topic.get(), n_k = s.topic.get(), bad = s.bad.get();
  long long D = shape_.docs;
  int K_arg = shape_.K;
  int shared_topics = shape_.K <= kSharedTopicsMax ? 1 : 0;
  void* arguments[] = {&offsets_arg, &words_arg, &z_arg, &D, &K_arg, &n_dk, &n_wk, &n_k, &bad, &shared_topics};
  launch(s.count, "bfly_lda_count", s.count_grid, 1, kRowThreads, 1,
         shared_topics ? static_cast<unsigned>(shape_.K * sizeof(int)) : 0u, stream, arguments);
}

template <typename T>
void LdaIteration::estimate_typed(const long long* doc_offsets, const LdaPriors& priors, LdaEstimate estimate,
                                  std::uint64_t seed, std::uint32_t iteration, T* theta, T* phi, CUstream_st* stream) {
  const gen::ElementType type = sizeof(T) == 4 ? gen::ElementType::f32 : gen::ElementType::f64;
  if (type != type_)
    throw Error(fmt::format("LdaIteration::estimate: this object was built for {}, called with {}",
                            gen::name_of(type_), gen::name_of(type)));
  if (!(priors.alpha > 0) || !(priors.beta > 0))
    throw Error(fmt::format("LdaIteration::estimate: priors must be positive (alpha = {}, beta = {})", priors.alpha,
                            priors.beta));
  if ((shape_.docs > 0 && (doc_offsets == nullptr || theta == nullptr)) || phi == nullptr)
    throw Error("LdaIteration::estimate: doc_offsets, theta and phi must be device arrays (one is null)");
  State& s = *state_;
  long long D = shape_.docs, V = shape_.vocab;
  int K = shape_.K;
  double alpha = priors.alpha, beta = priors.beta;
  unsigned long long seed_arg = seed;
  unsigned int iteration_arg = iteration;
  int draw = estimate == LdaEstimate::draw ? 1 : 0;
  CUdeviceptr offsets_arg = ptr(doc_offsets), theta_arg = ptr(theta), phi_arg = ptr(phi);
  CUdeviceptr n_dk = s.doc_topic.get(), n_wk = s.word_topic.get(), n_k = s.topic.get();
  CUdeviceptr theta_partials = s.ll_partials.get();
  CUdeviceptr phi_partials = theta_partials + static_cast<CUdeviceptr>(s.theta_grid) * sizeof(double);
  CUdeviceptr alpha_terms = s.alpha_terms.get(), beta_terms = s.beta_terms.get();
  int terms = kCountTerms;

  // The tables of count terms (two launches of a few blocks, on the same stream as their readers).
  for (auto [prior, table] : {std::pair{alpha, alpha_terms}, std::pair{beta, beta_terms}}) {
    void* arguments[] = {&prior, &terms, &table};
    launch(s.lgamma_table, "bfly_lda_lgamma_table", (kCountTerms + 255) / 256, 1, 256, 1, 0, stream, arguments);
  }

  // theta and the documents' terms.
  {
    void* arguments[] = {&offsets_arg, &D,    &K,        &n_dk,          &alpha,     &alpha_terms,
                         &terms,       &draw, &seed_arg, &iteration_arg, &theta_arg, &theta_partials};
    launch(s.theta, "bfly_lda_theta", s.theta_grid, 1, kRowThreads, 1, 0, stream, arguments);
  }
  // phi and the words' terms.
  if (estimate == LdaEstimate::mean) {
    void* arguments[] = {&V, &K, &n_wk, &n_k, &beta, &beta_terms, &terms, &phi_arg, &phi_partials};
    launch(s.phi_mean, "bfly_lda_phi_mean", s.phi_grid, 1, kRowThreads, 1, 0, stream, arguments);
  } else {
    long long chunks = (V + kRowsPerChunk - 1) / kRowsPerChunk;
    if (s.gammas.size() == 0) {
      s.gammas = DeviceBuffer(static_cast<std::size_t>(V * K) * sizeof(double));
      s.column_partial = DeviceBuffer(static_cast<std::size_t>(chunks * K) * sizeof(double));
      s.column_sum = DeviceBuffer(static_cast<std::size_t>(K) * sizeof(double));
    }
    CUdeviceptr gammas = s.gammas.get(), partial = s.column_partial.get(), sum = s.column_sum.get();
    {
      void* arguments[] = {&V,     &K,        &n_wk,          &n_k,    &beta,        &beta_terms,
                           &terms, &seed_arg, &iteration_arg, &gammas, &phi_partials};
      launch(s.phi_gammas, "bfly_lda_phi_gammas", s.phi_grid, 1, kRowThreads, 1, 0, stream, arguments);
    }
    {
      long long rows = kRowsPerChunk;
      void* arguments[] = {&gammas, &V, &K, &rows, &partial};
      launch(s.column_partials, "bfly_lda_column_partials", (K + 31) / 32, static_cast<unsigned>(chunks), 32, 8, 0,
             stream, arguments);
    }
    {
      int chunk_count = static_cast<int>(chunks);
      void* arguments[] = {&partial, &chunk_count, &K, &sum};
      launch(s.column_finish, "bfly_lda_column_finish", (K + 255) / 256, 1, 256, 1, 0, stream, arguments);
    }
    {
      void* arguments[] = {&gammas, &V, &K, &sum, &phi_arg};
      launch(s.normalize_phi, "bfly_lda_normalize_phi", std::min((V * K + 255) / 256, 65536ll), 1, 256, 1, 0, stream,
             arguments);
    }
  }
  // The log-likelihood: partials in order plus the topics' terms.
  {
    CUdeviceptr partials = s.ll_partials.get(), result = s.ll_result.get();
    int count = static_cast<int>(s.theta_grid + s.phi_grid);
    void* arguments[] = {&partials, &count, &n_k, &K, &V, &beta, &result};
    launch(s.finish_ll, "bfly_lda_finish_ll", 1, 1, 256, 1, 0, stream, arguments);
  }
}

void LdaIteration::estimate(const long long* doc_offsets, const LdaPriors& priors, LdaEstimate estimate,
                            std::uint64_t seed, std::uint32_t iteration, float* theta, float* phi,
                            CUstream_st* stream) {
  estimate_typed(doc_offsets, priors, estimate, seed, iteration, theta, phi, stream);
}

void LdaIteration::estimate(const long long* doc_offsets, const LdaPriors& priors, LdaEstimate estimate,
                            std::uint64_t seed, std::uint32_t iteration, double* theta, double* phi,
                            CUstream_st* stream) {
  estimate_typed(doc_offsets, priors, estimate, seed, iteration, theta, phi, stream);
}

double LdaIteration::log_likelihood(CUstream_st* stream) {
  double value = 0;
  check(driver().MemcpyDtoHAsync(&value, state_->ll_result.get(), sizeof value, stream),
        "cuMemcpyDtoHAsync(log-likelihood)");
  check(driver().StreamSynchronize(stream), "the LDA iteration kernels");
  return value;
}

long long LdaIteration::invalid_topics(CUstream_st* stream) {
  unsigned long long value = 0;
  check(driver().MemcpyDtoHAsync(&value, state_->bad.get(), sizeof value, stream), "cuMemcpyDtoHAsync(bad topics)");
  check(driver().StreamSynchronize(stream), "the LDA count kernel");
  return static_cast<long long>(value);
}

}  // namespace bfly::rt
