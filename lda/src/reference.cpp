// The CPU reference of one uncollapsed LDA Gibbs iteration (see reference.hpp for the streams and formulas).
#include "bfly/lda/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

// The uniforms of the kernels: the same Philox text, compiled for the CPU.
#define __device__
#define __forceinline__ inline
#include "bfly/philox.cuh"
#undef __device__
#undef __forceinline__

namespace bfly::lda {

namespace {

// Runs f(begin, end, chunk) for the chunks [c * chunk, min(n, (c + 1) * chunk)) on `threads` threads. The chunking
// does not depend on the thread count, so per-chunk results combined in chunk order are reproducible.
template <typename F>
void parallel_chunks(std::int64_t n, std::int64_t chunk, int threads, F&& f) {
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  std::atomic<std::int64_t> next{0};
  auto worker = [&] {
    for (std::int64_t c; (c = next.fetch_add(1)) < chunks;) f(c * chunk, std::min(n, (c + 1) * chunk), c);
  };
  const int helpers = static_cast<int>(std::min<std::int64_t>(threads, chunks)) - 1;
  std::vector<std::jthread> pool;
  for (int t = 0; t < helpers; ++t) pool.emplace_back(worker);
  worker();
}

double lgamma_safe(double x) {  // lgamma without glibc's global signgam (thread-safe)
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

// A uniform in the open interval (0, 1) from 32 random bits, for logarithms.
double open_uniform(std::uint32_t bits) { return (static_cast<double>(bits) + 0.5) * 2.3283064365386962890625e-10; }

// lgamma(n + prior) - lgamma(prior) for counts n: tabulated for small n, computed otherwise.
class LogGammaRatio {
 public:
  explicit LogGammaRatio(double prior) : prior_(prior), base_(lgamma_safe(prior)), table_(kTable) {
    for (int n = 0; n < kTable; ++n) table_[n] = lgamma_safe(n + prior) - base_;
  }
  double operator()(std::int64_t n) const { return n < kTable ? table_[n] : lgamma_safe(n + prior_) - base_; }

 private:
  static constexpr int kTable = 4096;
  double prior_, base_;
  std::vector<double> table_;
};

}  // namespace

double Priors::alpha_sum(int K) const {
  if (topic_alpha.empty()) return K * alpha;
  double sum = 0;
  for (const double a : topic_alpha) sum += a;
  return sum;
}

std::vector<double> Priors::alpha_vector(int K) const {
  return topic_alpha.empty() ? std::vector<double>(static_cast<std::size_t>(K), alpha) : topic_alpha;
}

void Priors::check(int K) const {
  if (!topic_alpha.empty() && topic_alpha.size() != static_cast<std::size_t>(K))
    throw Error(fmt::format("priors: the asymmetric alpha has {} values, expected one per topic (K = {})",
                            topic_alpha.size(), K));
  for (int k = 0; k < K; ++k)
    if (!(alpha_of(k) > 0) || !std::isfinite(alpha_of(k)))
      throw Error(fmt::format("priors: alpha[{}] = {}, expected a positive finite number", k, alpha_of(k)));
  if (!(beta > 0) || !std::isfinite(beta))
    throw Error(fmt::format("priors: beta = {}, expected a positive finite number", beta));
}

const char* name_of(Estimate estimate) {
  switch (estimate) {
    case Estimate::mean: return "mean";
    case Estimate::draw: return "draw";
    case Estimate::collapsed: return "collapsed";
  }
  return "?";
}

Estimate parse_estimate(std::string_view name) {
  for (const Estimate e : {Estimate::mean, Estimate::draw, Estimate::collapsed})
    if (name == name_of(e)) return e;
  throw Error(fmt::format("unknown estimate \"{}\"; expected mean, draw or collapsed", name));
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hardware, 1u, 16u));
}

template <typename T>
T token_uniform(std::uint64_t seed, std::uint64_t token, std::uint32_t iteration) {
  return bfly::uniform_from_bits(bfly::philox_bits(seed, token, 0u, iteration), T());
}

template <typename T>
T scaled_uniform(T u, T total) {
  const T scaled = u * total;
  return scaled < total ? scaled : std::nextafter(total, T(0));
}

template <typename T>
T own_topic_excess(T theta, T phi, std::int64_t doc_tokens, double alpha_sum, std::int32_t topic_count,
                   double v_beta) {
  const T with_token = theta * phi;
  const double theta_without = static_cast<double>(theta) - 1.0 / (static_cast<double>(doc_tokens) + alpha_sum);
  const double denominator = static_cast<double>(topic_count) + v_beta;
  const double phi_without = denominator > 1.0
                                 ? (static_cast<double>(phi) * denominator - 1.0) / (denominator - 1.0)
                                 : static_cast<double>(phi);
  const T without = static_cast<T>(std::max(theta_without, 0.0)) * static_cast<T>(std::max(phi_without, 0.0));
  return with_token > without ? with_token - without : T(0);
}

void check_collapsed(const CollapsedTerms& collapsed, int K, std::string_view caller) {
  if (collapsed.topic_counts.size() != static_cast<std::size_t>(K))
    throw Error(fmt::format("{}: the collapsed z-step needs K = {} topic counts, got {}", caller, K,
                            collapsed.topic_counts.size()));
  const auto positive = [](double x) { return x > 0 && std::isfinite(x); };
  if (!positive(collapsed.alpha_sum) || !positive(collapsed.v_beta))
    throw Error(fmt::format("{}: the collapsed z-step needs a positive finite alpha_sum and v_beta, got {} and {}",
                            caller, collapsed.alpha_sum, collapsed.v_beta));
}

template <typename T>
CpuZStep<T>::CpuZStep(int threads) : threads_(resolve_threads(threads)) {}

template <typename T>
std::string CpuZStep<T>::name() const {
  return fmt::format("cpu-reference ({} thread{})", threads_, threads_ == 1 ? "" : "s");
}

template <typename T>
ZStepReport CpuZStep<T>::run(const Corpus& corpus, int K, std::span<const T> theta, std::span<const T> phi,
                             std::span<std::int32_t> z, std::uint64_t seed, std::uint32_t iteration,
                             const CollapsedTerms* collapsed) {
  const std::int64_t D = corpus.num_docs();
  if (K < 1 || theta.size() != static_cast<std::size_t>(D) * K ||
      phi.size() != static_cast<std::size_t>(corpus.vocab_size()) * K ||
      z.size() != static_cast<std::size_t>(corpus.num_tokens()))
    throw Error(fmt::format("CpuZStep::run: sizes do not match the corpus (D = {}, V = {}, tokens = {}, K = {}): "
                            "theta {}, phi {}, z {}",
                            D, corpus.vocab_size(), corpus.num_tokens(), K, theta.size(), phi.size(), z.size()));
  if (collapsed != nullptr) check_collapsed(*collapsed, K, "CpuZStep::run");
  constexpr std::int64_t kChunk = 256;  // documents per work item
  std::vector<ZStepReport> reports(static_cast<std::size_t>((D + kChunk - 1) / kChunk));
  parallel_chunks(D, kChunk, threads_, [&](std::int64_t first, std::int64_t last, std::int64_t chunk) {
    std::vector<T> prefix(static_cast<std::size_t>(K));
    ZStepReport& report = reports[chunk];
    for (std::int64_t m = first; m < last; ++m) {
      const T* const theta_row = theta.data() + m * K;
      for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i) {
        const T* const phi_row = phi.data() + static_cast<std::int64_t>(corpus.words[i]) * K;
        // The collapsed z-step: the token's own topic weighs own_topic_excess less.
        const int own = collapsed != nullptr && z[i] >= 0 && z[i] < K ? z[i] : -1;
        const T excess = own < 0 ? T(0)
                                 : own_topic_excess(theta_row[own], phi_row[own], corpus.doc_length(m),
                                                    collapsed->alpha_sum, collapsed->topic_counts[own],
                                                    collapsed->v_beta);
        // Algorithm 1 lines 6-14: products and sequential partial sums (compiled without FMA contraction).
        T running = T(0);
        for (int k = 0; k < K; ++k) {
          const T product = theta_row[k] * phi_row[k];
          running += k == own ? product - excess : product;
          prefix[k] = running;
        }
        const T total = running;
        if (!(total > T(0) && total <= std::numeric_limits<T>::max())) {
          z[i] = -1;
          if (report.invalid_tokens++ == 0) report.first_invalid = corpus.first_token + i;
          continue;
        }
        const auto token = static_cast<std::uint64_t>(corpus.first_token + i);  // its index in the whole corpus
        const T target = scaled_uniform(token_uniform<T>(seed, token, iteration), total);
        // Algorithm 2: the smallest k with target < prefix[k] (prefix is non-decreasing, so upper_bound finds it).
        const auto k = std::upper_bound(prefix.begin(), prefix.end(), target) - prefix.begin();
        z[i] = static_cast<std::int32_t>(std::min<std::ptrdiff_t>(k, K - 1));
      }
    }
  });
  ZStepReport total;
  for (const ZStepReport& r : reports) {
    if (r.invalid_tokens > 0 && total.invalid_tokens == 0) total.first_invalid = r.first_invalid;
    total.invalid_tokens += r.invalid_tokens;
  }
  return total;
}

void initial_topics(const Corpus& corpus, int K, std::uint64_t seed, std::span<std::int32_t> z) {
  for (std::int64_t i = 0; i < corpus.num_tokens(); ++i) {
    const double u =
        bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<std::uint64_t>(i), kStreamInit << 24, 0u), 0.0);
    z[i] = std::min(K - 1, static_cast<int>(u * K));
  }
}

Counts count_topics(const Corpus& corpus, int K, std::span<const std::int32_t> z, int threads) {
  Counts counts;
  counts.K = K;
  counts.doc_topic.assign(static_cast<std::size_t>(corpus.num_docs()) * K, 0);
  counts.word_topic.assign(static_cast<std::size_t>(corpus.vocab_size()) * K, 0);
  counts.topic.assign(static_cast<std::size_t>(K), 0);
  for (std::int64_t i = 0; i < corpus.num_tokens(); ++i)
    if (z[i] < 0 || z[i] >= K)
      throw Error(fmt::format("count_topics: token {} has topic {}, outside [0, K = {})", i, z[i], K));
  parallel_chunks(corpus.num_docs(), 1024, resolve_threads(threads), [&](std::int64_t first, std::int64_t last,
                                                                         std::int64_t) {
    for (std::int64_t m = first; m < last; ++m)
      for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i)
        ++counts.doc_topic[m * K + z[i]];
  });
  for (std::int64_t i = 0; i < corpus.num_tokens(); ++i) {
    ++counts.word_topic[static_cast<std::int64_t>(corpus.words[i]) * K + z[i]];
    ++counts.topic[z[i]];
  }
  return counts;
}

double gamma_draw(double shape, std::uint64_t seed, std::uint64_t index, std::uint32_t stream,
                  std::uint32_t iteration) {
  const unsigned key0 = static_cast<unsigned>(seed), key1 = static_cast<unsigned>(seed >> 32);
  auto block = [&](std::uint32_t attempt) {
    const bfly::Philox4x32 counter{{static_cast<unsigned>(index), static_cast<unsigned>(index >> 32),
                                    (stream << 24) | attempt, iteration}};
    return bfly::philox4x32_10(counter, key0, key1);
  };
  // Shape < 1: Gamma(a) = Gamma(a + 1) * U^(1/a), with U from the last word of attempt 0 (computed once).
  bfly::Philox4x32 r = block(0);
  double boost = 1.0;
  if (shape < 1.0) {
    boost = std::pow(open_uniform(r.v[3]), 1.0 / shape);
    shape += 1.0;
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (std::uint32_t attempt = 0; attempt < (1u << 24); ++attempt) {
    if (attempt > 0) r = block(attempt);
    // Box-Muller normal from two words, acceptance uniform from the third.
    const double x = std::sqrt(-2.0 * std::log(open_uniform(r.v[0]))) *
                     std::cos(6.283185307179586476925 * (static_cast<double>(r.v[1]) * 2.3283064365386962890625e-10));
    const double t = 1.0 + c * x;
    if (t <= 0.0) continue;
    const double v = t * t * t;
    if (std::log(open_uniform(r.v[2])) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * boost;
  }
  return d * boost;  // not reached in practice: the acceptance rate is above 95 %
}

template <typename T>
void estimate_theta(const Corpus& corpus, const Counts& counts, const Priors& priors, Estimate estimate,
                    std::uint64_t seed, std::uint32_t iteration, std::span<T> theta, int threads) {
  const int K = counts.K;
  const double alpha_sum = priors.alpha_sum(K);
  parallel_chunks(corpus.num_docs(), 256, resolve_threads(threads), [&](std::int64_t first, std::int64_t last,
                                                                        std::int64_t) {
    std::vector<double> g(static_cast<std::size_t>(K));
    for (std::int64_t m = first; m < last; ++m) {
      const std::int32_t* n = counts.doc_topic.data() + m * K;
      T* row = theta.data() + m * K;
      if (estimate == Estimate::draw) {
        double sum = 0;
        for (int k = 0; k < K; ++k) {
          g[k] = gamma_draw(n[k] + priors.alpha_of(k), seed, static_cast<std::uint64_t>(corpus.first_doc + m) * K + k,
                            kStreamTheta, iteration);
          sum += g[k];
        }
        if (sum > 0 && std::isfinite(sum)) {
          for (int k = 0; k < K; ++k) row[k] = static_cast<T>(g[k] / sum);
          continue;
        }
      }
      const double denominator = static_cast<double>(corpus.doc_length(m)) + alpha_sum;
      for (int k = 0; k < K; ++k) row[k] = static_cast<T>((n[k] + priors.alpha_of(k)) / denominator);
    }
  });
}

template <typename T>
void estimate_phi(const Corpus& corpus, const Counts& counts, const Priors& priors, Estimate estimate,
                  std::uint64_t seed, std::uint32_t iteration, std::span<T> phi, int threads) {
  const int K = counts.K;
  const std::int64_t V = corpus.vocab_size();
  threads = resolve_threads(threads);
  if (forms_means(estimate)) {
    std::vector<double> denominator(static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k) denominator[k] = static_cast<double>(counts.topic[k]) + V * priors.beta;
    parallel_chunks(V, 1024, threads, [&](std::int64_t first, std::int64_t last, std::int64_t) {
      for (std::int64_t w = first; w < last; ++w)
        for (int k = 0; k < K; ++k)
          phi[w * K + k] = static_cast<T>((counts.word_topic[w * K + k] + priors.beta) / denominator[k]);
    });
    return;
  }
  // Draws: phi[., k] = g[., k] / sum_w g[w, k] with g[w, k] ~ Gamma(n_wk + beta); column sums in word order.
  std::vector<double> g(static_cast<std::size_t>(V) * K);
  parallel_chunks(V, 256, threads, [&](std::int64_t first, std::int64_t last, std::int64_t) {
    for (std::int64_t w = first; w < last; ++w)
      for (int k = 0; k < K; ++k)
        g[w * K + k] = gamma_draw(counts.word_topic[w * K + k] + priors.beta, seed,
                                  static_cast<std::uint64_t>(w) * K + k, kStreamPhi, iteration);
  });
  std::vector<double> sum(static_cast<std::size_t>(K), 0.0);
  for (std::int64_t w = 0; w < V; ++w)
    for (int k = 0; k < K; ++k) sum[k] += g[w * K + k];
  parallel_chunks(V, 1024, threads, [&](std::int64_t first, std::int64_t last, std::int64_t) {
    for (std::int64_t w = first; w < last; ++w)
      for (int k = 0; k < K; ++k) phi[w * K + k] = static_cast<T>(g[w * K + k] / sum[k]);
  });
}

std::vector<double> document_log_likelihood_chunks(const Corpus& corpus, const Counts& counts, const Priors& priors,
                                                   int threads) {
  const int K = counts.K;
  const std::int64_t D = corpus.num_docs();
  constexpr std::int64_t kChunk = kLogLikelihoodChunk;
  // Documents: lgamma(A) - lgamma(N_d + A) + sum_k (lgamma(n_dk + alpha_k) - lgamma(alpha_k)), A = sum_k alpha_k.
  // A symmetric alpha's terms come from one table; an asymmetric one's are computed (lgamma(alpha_k) once).
  const bool symmetric = priors.symmetric_alpha();
  const LogGammaRatio doc_term(symmetric ? priors.alpha : 1.0);
  std::vector<double> lgamma_alpha(symmetric ? 0 : static_cast<std::size_t>(K));
  for (std::size_t k = 0; k < lgamma_alpha.size(); ++k) lgamma_alpha[k] = lgamma_safe(priors.topic_alpha[k]);
  std::vector<double> doc_part(static_cast<std::size_t>((D + kChunk - 1) / kChunk), 0.0);
  const double alpha_sum = priors.alpha_sum(K), lgamma_alpha_sum = lgamma_safe(alpha_sum);
  parallel_chunks(D, kChunk, resolve_threads(threads), [&](std::int64_t first, std::int64_t last, std::int64_t chunk) {
    double ll = 0;
    for (std::int64_t m = first; m < last; ++m) {
      ll += lgamma_alpha_sum - lgamma_safe(static_cast<double>(corpus.doc_length(m)) + alpha_sum);
      const std::int32_t* n = counts.doc_topic.data() + m * K;
      for (int k = 0; k < K; ++k)
        if (n[k] != 0)
          ll += symmetric ? doc_term(n[k]) : lgamma_safe(n[k] + priors.topic_alpha[k]) - lgamma_alpha[k];
    }
    doc_part[chunk] = ll;
  });
  return doc_part;
}

double add_topic_log_likelihood(double documents, const Corpus& corpus, const Counts& counts, const Priors& priors,
                                int threads) {
  const int K = counts.K;
  const std::int64_t V = corpus.vocab_size();
  const LogGammaRatio word_term(priors.beta);
  constexpr std::int64_t kChunk = kLogLikelihoodChunk;
  // Topics: lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_wk + beta) - lgamma(beta)).
  std::vector<double> word_part(static_cast<std::size_t>((V + kChunk - 1) / kChunk), 0.0);
  parallel_chunks(V, kChunk, resolve_threads(threads), [&](std::int64_t first, std::int64_t last, std::int64_t chunk) {
    double ll = 0;
    for (std::int64_t i = first * K; i < last * K; ++i)
      if (counts.word_topic[i] != 0) ll += word_term(counts.word_topic[i]);
    word_part[chunk] = ll;
  });
  double ll = documents;
  for (const double part : word_part) ll += part;
  const double lgamma_v_beta = lgamma_safe(V * priors.beta);
  for (int k = 0; k < K; ++k) ll += lgamma_v_beta - lgamma_safe(static_cast<double>(counts.topic[k]) + V * priors.beta);
  return ll;
}

double log_likelihood(const Corpus& corpus, const Counts& counts, const Priors& priors, int threads) {
  double documents = 0;
  for (const double part : document_log_likelihood_chunks(corpus, counts, priors, threads)) documents += part;
  return add_topic_log_likelihood(documents, corpus, counts, priors, threads);
}

template float own_topic_excess<float>(float, float, std::int64_t, double, std::int32_t, double);
template double own_topic_excess<double>(double, double, std::int64_t, double, std::int32_t, double);
template class CpuZStep<float>;
template class CpuZStep<double>;
template float token_uniform<float>(std::uint64_t, std::uint64_t, std::uint32_t);
template double token_uniform<double>(std::uint64_t, std::uint64_t, std::uint32_t);
template float scaled_uniform<float>(float, float);
template double scaled_uniform<double>(double, double);
template void estimate_theta<float>(const Corpus&, const Counts&, const Priors&, Estimate, std::uint64_t,
                                    std::uint32_t, std::span<float>, int);
template void estimate_theta<double>(const Corpus&, const Counts&, const Priors&, Estimate, std::uint64_t,
                                     std::uint32_t, std::span<double>, int);
template void estimate_phi<float>(const Corpus&, const Counts&, const Priors&, Estimate, std::uint64_t,
                                  std::uint32_t, std::span<float>, int);
template void estimate_phi<double>(const Corpus&, const Counts&, const Priors&, Estimate, std::uint64_t,
                                   std::uint32_t, std::span<double>, int);

}  // namespace bfly::lda
