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
#include <cmath>
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


LaunchShape rows_shape(long long grid, unsigned threads, unsigned shared = 0) {
  return LaunchShape{std::max(grid, 1ll), 1, threads, 1, shared};
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

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

// Throws unless the priors are positive and finite, with K values when alpha is a vector; `caller` names the call.
void check_priors(const LdaPriors& priors, int K, std::string_view caller) {
  const bool symmetric = priors.topic_alpha.empty();
  if ((symmetric && !(priors.alpha > 0)) || !(priors.beta > 0))
    throw Error(fmt::format("{}: priors must be positive (alpha = {}, beta = {})", caller, priors.alpha, priors.beta));
  if (!symmetric && priors.topic_alpha.size() != static_cast<std::size_t>(K))
    throw Error(fmt::format("{}: topic_alpha has {} values, expected K = {}", caller, priors.topic_alpha.size(), K));
  for (std::size_t k = 0; k < priors.topic_alpha.size(); ++k)
    if (!(priors.topic_alpha[k] > 0) || !std::isfinite(priors.topic_alpha[k]))
      throw Error(fmt::format("{}: topic_alpha[{}] = {}, expected a positive number", caller, k,
                              priors.topic_alpha[k]));
}

}  // namespace

struct LdaIteration::State {
  // One entry point of the iteration module (a member of State, not of the file's anonymous namespace: State has
  // linkage, and a unity build would warn of the subobject), with its description (for packing its arguments).
  struct Entry {
    const gen::IterationKernel* kernel = nullptr;
    CUfunction function = nullptr;
    std::string name;

    Entry() = default;
    Entry(const Module& module, std::string_view family, gen::ElementType type)
        : kernel(&gen::lda_iteration_kernel(family)), name(kernel->name(type)) {
      check(driver().ModuleGetFunction(&function, module.get(), name.c_str()),
            fmt::format("cuModuleGetFunction({})", name));
    }
    // Packs `values` against the entry's arguments and launches it with `shape`.
    void operator()(gen::ElementType type, const LaunchShape& shape, CUstream stream,
                    std::initializer_list<gen::ArgValue> values) const {
      gen::PackedArgs args(kernel->family, type, name, values);
      launch(function, name, shape, args, stream);
    }
  };

  std::shared_ptr<const Module> module;
  Entry zero, count, phi_gammas, column_partials, lgamma_table, column_finish, finish_ll, theta, phi_mean,
      normalize_phi, add_theta_means, add_phi_means;
  DeviceBuffer doc_topic, word_topic, topic, bad, ll_partials, ll_result;
  DeviceBuffer alpha_terms, beta_terms;  // kCountTerms log-likelihood terms of each prior, made by every estimate()
  DeviceBuffer alpha;                    // K doubles: alpha_k, uploaded when the priors change
  std::vector<double> alpha_host;        // what `alpha` holds (empty before the first estimate)
  DeviceBuffer gammas, column_partial, column_sum;  // allocated on the first Dirichlet draw of phi
  long long count_grid = 0, theta_grid = 0, phi_grid = 0;

  // Puts alpha_k on the device (uploaded only when it changed: hyperparameter optimisation changes it every few
  // iterations) and returns its sum as the CPU reference forms it: K alpha when symmetric, else in topic order.
  double upload_alpha(const LdaPriors& priors, int K, CUstream stream) {
    const bool symmetric = priors.topic_alpha.empty();
    std::vector<double> alpha_values =
        symmetric ? std::vector<double>(static_cast<std::size_t>(K), priors.alpha) : priors.topic_alpha;
    double alpha_sum = static_cast<double>(K) * priors.alpha;
    if (!symmetric) {
      alpha_sum = 0;
      for (const double a : alpha_values) alpha_sum += a;
    }
    if (alpha_values != alpha_host) {
      alpha_host = std::move(alpha_values);
      check(driver().MemcpyHtoDAsync(alpha.get(), alpha_host.data(), alpha_host.size() * sizeof(double), stream),
            "cuMemcpyHtoDAsync(alpha)");
    }
    return alpha_sum;
  }
};

LdaIteration::LdaIteration(const LdaShape& shape, gen::ElementType type)
    : shape_(shape), type_(type), state_(std::make_unique<State>()) {
  if (shape.K < 1 || shape.K > 65536)
    throw Error(fmt::format("LdaIteration: K = {} is out of range; K must be in 1 .. 65536", shape.K));
  if (shape.first_doc < 0)
    throw Error(fmt::format("LdaIteration: first_doc = {} is negative", shape.first_doc));
  if (shape.docs < 0 || shape.vocab < 1 || shape.tokens < 0 || shape.tokens >= INT_MAX)
    throw Error(fmt::format("LdaIteration: bad corpus sizes D = {}, V = {}, tokens = {} (need D >= 0, V >= 1, "
                            "0 <= tokens < 2^31)",
                            shape.docs, shape.vocab, shape.tokens));
  State& s = *state_;
  const CacheLookup lookup =
      default_cache().get(gen::lda_iteration_source(type), default_compile_options(current_device_arch()));
  s.module = std::make_shared<const Module>(*lookup.kernel);
  const Module& m = *s.module;
  const auto entry = [&](std::string_view name) { return State::Entry(m, name, type); };
  s.zero = entry("bfly_lda_zero");
  s.lgamma_table = entry("bfly_lda_lgamma_table");
  s.count = entry("bfly_lda_count");
  s.phi_gammas = entry("bfly_lda_phi_gammas");
  s.column_partials = entry("bfly_lda_column_partials");
  s.column_finish = entry("bfly_lda_column_finish");
  s.finish_ll = entry("bfly_lda_finish_ll");
  s.theta = entry("bfly_lda_theta");
  s.phi_mean = entry("bfly_lda_phi_mean");
  s.normalize_phi = entry("bfly_lda_normalize_phi");
  s.add_theta_means = entry("bfly_lda_add_theta_means");
  s.add_phi_means = entry("bfly_lda_add_phi_means");

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
  s.alpha = DeviceBuffer(static_cast<std::size_t>(K) * sizeof(double));
}

LdaIteration::LdaIteration(LdaIteration&&) noexcept = default;
LdaIteration& LdaIteration::operator=(LdaIteration&&) noexcept = default;
LdaIteration::~LdaIteration() = default;

const int* LdaIteration::doc_topic() const { return reinterpret_cast<const int*>(state_->doc_topic.get()); }
const int* LdaIteration::word_topic() const { return reinterpret_cast<const int*>(state_->word_topic.get()); }
const int* LdaIteration::topic() const { return reinterpret_cast<const int*>(state_->topic.get()); }
int* LdaIteration::word_topic() { return reinterpret_cast<int*>(state_->word_topic.get()); }
int* LdaIteration::topic() { return reinterpret_cast<int*>(state_->topic.get()); }

void LdaIteration::count(const long long* doc_offsets, const int* words, const int* z, CUstream_st* stream) {
  State& s = *state_;
  if (shape_.docs > 0 && (doc_offsets == nullptr || (shape_.tokens > 0 && (words == nullptr || z == nullptr))))
    throw Error("LdaIteration::count: doc_offsets, words and z must be device arrays (one is null)");
  const long long K = shape_.K;
  for (const auto& [buffer, n] : {std::pair{&s.doc_topic, shape_.docs * K}, std::pair{&s.word_topic, shape_.vocab * K},
                                  std::pair{&s.topic, K}, std::pair{&s.bad, 2ll}})
    s.zero(type_, rows_shape(std::min((n + 255) / 256, 65536ll), 256), stream, {ptr(buffer->get()), n});
  if (shape_.docs == 0) return;
  const int shared_topics = shape_.K <= kSharedTopicsMax ? 1 : 0;
  s.count(type_, rows_shape(s.count_grid, kRowThreads, shared_topics ? static_cast<unsigned>(K * sizeof(int)) : 0u),
          stream,
          {doc_offsets, words, z, shape_.docs, shape_.K, ptr(s.doc_topic.get()), ptr(s.word_topic.get()),
           ptr(s.topic.get()), ptr(s.bad.get()), shared_topics});
}

void LdaIteration::estimate(gen::ElementType type, const long long* doc_offsets, const LdaPriors& priors,
                            LdaEstimate estimate, std::uint64_t seed, std::uint32_t iteration, void* theta, void* phi,
                            CUstream_st* stream) {
  if (type != type_)
    throw Error(fmt::format("LdaIteration::estimate: this object was built for {}, called with {}",
                            gen::name_of(type_), gen::name_of(type)));
  check_priors(priors, shape_.K, "LdaIteration::estimate");
  const bool symmetric = priors.topic_alpha.empty();
  if ((shape_.docs > 0 && (doc_offsets == nullptr || theta == nullptr)) || phi == nullptr)
    throw Error("LdaIteration::estimate: doc_offsets, theta and phi must be device arrays (one is null)");
  State& s = *state_;
  const long long D = shape_.docs, V = shape_.vocab;
  const int K = shape_.K;
  const double alpha = priors.alpha, beta = priors.beta;
  const double alpha_sum = s.upload_alpha(priors, K, stream);
  const int draw = estimate == LdaEstimate::draw ? 1 : 0;
  void* const theta_partials = ptr(s.ll_partials.get());
  void* const phi_partials = ptr(s.ll_partials.get() + static_cast<CUdeviceptr>(s.theta_grid) * sizeof(double));
  void* const alpha_terms = ptr(s.alpha_terms.get());
  void* const beta_terms = ptr(s.beta_terms.get());
  const int terms = kCountTerms;
  const int alpha_table_terms = symmetric ? kCountTerms : 0;  // an asymmetric alpha's terms are computed

  // The tables of count terms (launches of a few blocks, on the same stream as their readers).
  if (symmetric) s.lgamma_table(type_, rows_shape((kCountTerms + 255) / 256, 256), stream, {alpha, terms, alpha_terms});
  s.lgamma_table(type_, rows_shape((kCountTerms + 255) / 256, 256), stream, {beta, terms, beta_terms});
  // theta and the documents' terms.
  s.theta(type_, rows_shape(s.theta_grid, kRowThreads), stream,
          {doc_offsets, D, shape_.first_doc, K, ptr(s.doc_topic.get()), ptr(s.alpha.get()), alpha_sum, alpha_terms,
           alpha_table_terms, draw, seed, iteration, theta, theta_partials});
  // phi and the words' terms.
  if (estimate == LdaEstimate::mean) {
    s.phi_mean(type_, rows_shape(s.phi_grid, kRowThreads), stream,
               {V, K, ptr(s.word_topic.get()), ptr(s.topic.get()), beta, beta_terms, terms, phi, phi_partials});
  } else {
    const long long chunks = (V + kRowsPerChunk - 1) / kRowsPerChunk;
    if (s.gammas.size() == 0) {
      s.gammas = DeviceBuffer(static_cast<std::size_t>(V * K) * sizeof(double));
      s.column_partial = DeviceBuffer(static_cast<std::size_t>(chunks * K) * sizeof(double));
      s.column_sum = DeviceBuffer(static_cast<std::size_t>(K) * sizeof(double));
    }
    void* const gammas = ptr(s.gammas.get());
    void* const partial = ptr(s.column_partial.get());
    void* const sum = ptr(s.column_sum.get());
    s.phi_gammas(type_, rows_shape(s.phi_grid, kRowThreads), stream,
                 {V, K, ptr(s.word_topic.get()), ptr(s.topic.get()), beta, beta_terms, terms, seed, iteration, gammas,
                  phi_partials});
    s.column_partials(type_, LaunchShape{(K + 31) / 32, static_cast<unsigned>(chunks), 32, 8, 0}, stream,
                      {gammas, V, K, kRowsPerChunk, partial});
    s.column_finish(type_, rows_shape((K + 255) / 256, 256), stream, {partial, static_cast<int>(chunks), K, sum});
    s.normalize_phi(type_, rows_shape(std::min((V * K + 255) / 256, 65536ll), 256), stream, {gammas, V, K, sum, phi});
  }
  // The log-likelihood: partials in order plus the topics' terms.
  s.finish_ll(type_, rows_shape(1, 256), stream,
              {ptr(s.ll_partials.get()), static_cast<int>(s.theta_grid + s.phi_grid), ptr(s.topic.get()), K, V, beta,
               ptr(s.ll_result.get())});
}

void LdaIteration::add_means(const long long* doc_offsets, const LdaPriors& priors, double* theta_sums,
                             double* phi_sums, CUstream_st* stream) {
  check_priors(priors, shape_.K, "LdaIteration::add_means");
  if ((shape_.docs > 0 && (doc_offsets == nullptr || theta_sums == nullptr)) || phi_sums == nullptr)
    throw Error("LdaIteration::add_means: doc_offsets, theta_sums and phi_sums must be device arrays (one is null)");
  State& s = *state_;
  const long long D = shape_.docs, V = shape_.vocab;
  const int K = shape_.K;
  const double alpha_sum = s.upload_alpha(priors, K, stream);
  const auto grid = [](long long n) { return rows_shape(std::min((n + 255) / 256, 65536ll), 256); };
  if (D > 0)
    s.add_theta_means(type_, grid(D * K), stream,
                      {doc_offsets, D, K, ptr(s.doc_topic.get()), ptr(s.alpha.get()), alpha_sum, theta_sums});
  s.add_phi_means(type_, grid(V * K), stream,
                  {V, K, ptr(s.word_topic.get()), ptr(s.topic.get()), priors.beta, phi_sums});
}

double LdaIteration::log_likelihood(CUstream_st* stream) {
  double value = 0;
  check(driver().MemcpyDtoHAsync(&value, state_->ll_result.get(), sizeof value, stream),
        "cuMemcpyDtoHAsync(log-likelihood)");
  check(driver().StreamSynchronize(stream), "the LDA iteration kernels");
  return value;
}

LdaLogLikelihoodPartials LdaIteration::log_likelihood_partials(CUstream_st* stream) {
  const State& s = *state_;
  std::vector<double> all(static_cast<std::size_t>(s.theta_grid + s.phi_grid));
  check(driver().MemcpyDtoHAsync(all.data(), s.ll_partials.get(), all.size() * sizeof(double), stream),
        "cuMemcpyDtoHAsync(log-likelihood partials)");
  check(driver().StreamSynchronize(stream), "the LDA iteration kernels");
  LdaLogLikelihoodPartials partials;
  partials.documents.assign(all.begin(), all.begin() + s.theta_grid);
  partials.words.assign(all.begin() + s.theta_grid, all.end());
  return partials;
}

long long LdaIteration::invalid_topics(CUstream_st* stream) {
  unsigned long long value = 0;
  check(driver().MemcpyDtoHAsync(&value, state_->bad.get(), sizeof value, stream), "cuMemcpyDtoHAsync(bad topics)");
  check(driver().StreamSynchronize(stream), "the LDA count kernel");
  return static_cast<long long>(value);
}

}  // namespace bfly::rt
