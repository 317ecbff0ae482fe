// lda-multi-gpu-bench: data-parallel bfly-lda iterations (bfly::lda::multi_gpu_engine: a rank per GPU, counts
// summed by NCCL) on a synthetic corpus made on the GPUs themselves (synthetic_words.cu: no token crosses PCIe),
// timed per iteration and split into z-step, counts, all-reduce and estimates (DataParallelEngine::last_phases).
// Run by bench/lda/run_multi_gpu_on_device.sh for 1 and 2 GPUs; one CSV row per timed iteration.
//
//   lda-multi-gpu-bench --gpus N [--tokens 1e9] [--topics 1024] [--doc-length 1000] [--vocab 100000]
//                       [--iterations 5] [--warmup 1] [--type f32|f64] [--seed 1] [--csv FILE]
#include "bfly/lda/multi_gpu.hpp"
#include "synthetic_words.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Settings {
  int gpus = 1;
  long long tokens = 1'000'000'000;
  int topics = 1024;
  long long doc_length = 1000;  // mean; lengths uniform in [doc_length / 2, 3 doc_length / 2]
  int vocab = 100'000;
  int iterations = 5, warmup = 1;
  std::string type = "f32";
  unsigned long long seed = 1;
  std::string csv;
};

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--gpus") s.gpus = std::stoi(value);
    else if (flag == "--tokens") s.tokens = static_cast<long long>(std::stod(value));
    else if (flag == "--topics") s.topics = std::stoi(value);
    else if (flag == "--doc-length") s.doc_length = std::stoll(value);
    else if (flag == "--vocab") s.vocab = std::stoi(value);
    else if (flag == "--iterations") s.iterations = std::stoi(value);
    else if (flag == "--warmup") s.warmup = std::stoi(value);
    else if (flag == "--type") s.type = value;
    else if (flag == "--seed") s.seed = std::stoull(value);
    else if (flag == "--csv") s.csv = value;
    else throw std::invalid_argument("unknown flag " + flag);
  }
  if (s.gpus < 1 || s.tokens < 1 || s.topics < 1 || s.doc_length < 2 || s.vocab < 1 || s.iterations < 1 ||
      (s.type != "f32" && s.type != "f64"))
    throw std::invalid_argument("bad settings (see the usage at the top of multi_gpu_bench.cpp)");
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Document lengths only (sorted longest first, as bfly-lda trains): the words are made on the GPUs.
bfly::lda::Corpus synthetic_corpus(const Settings& s) {
  bfly::lda::Corpus corpus;
  std::mt19937_64 rng(s.seed);
  std::uniform_int_distribution<long long> length(s.doc_length / 2, s.doc_length + s.doc_length / 2);
  std::vector<long long> lengths;
  for (long long total = 0; total < s.tokens;) {
    const long long n = std::min(length(rng), s.tokens - total);
    lengths.push_back(n);
    total += n;
  }
  std::sort(lengths.begin(), lengths.end(), std::greater<>());
  corpus.doc_offsets.reserve(lengths.size() + 1);
  for (const long long n : lengths) corpus.doc_offsets.push_back(corpus.doc_offsets.back() + n);
  corpus.doc_ids.resize(lengths.size());
  for (std::size_t m = 0; m < lengths.size(); ++m) corpus.doc_ids[m] = static_cast<std::int64_t>(m);
  corpus.input_documents = static_cast<std::int64_t>(lengths.size());
  corpus.vocab.reserve(static_cast<std::size_t>(s.vocab));
  for (int w = 0; w < s.vocab; ++w) corpus.vocab.push_back(fmt::format("w{}", w));
  return corpus;
}

// Uniform random starting topics on all cores (hashed per token, so any thread count gives the same).
std::vector<std::int32_t> starting_topics(long long tokens, int K, unsigned long long seed) {
  std::vector<std::int32_t> z(static_cast<std::size_t>(tokens));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::jthread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (long long i = t; i < tokens; i += threads) {
        unsigned long long x = seed * 0x9e3779b97f4a7c15ull + static_cast<unsigned long long>(i);
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        z[static_cast<std::size_t>(i)] = static_cast<std::int32_t>((x ^ (x >> 31)) % static_cast<unsigned>(K));
      }
    });
  return z;
}

template <typename T>
int run(const Settings& s) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) throw std::runtime_error("no CUDA device");
  const std::string device = properties.name;
  const auto start = std::chrono::steady_clock::now();
  const bfly::lda::Corpus corpus = synthetic_corpus(s);
  std::printf("corpus: %lld documents, %d words, %lld tokens (lengths made on the host in %.2f s)\n",
              static_cast<long long>(corpus.num_docs()), corpus.vocab_size(),
              static_cast<long long>(corpus.num_tokens()), seconds_since(start));

  const bfly::lda::DeviceWordsFill fill = [&s](const bfly::lda::Corpus& shard, const long long* offsets, int* words) {
    make_synthetic_words(offsets, shard.num_docs(), shard.first_doc, words, s.vocab, s.seed);
  };
  auto engine = bfly::lda::multi_gpu_engine<T>(s.gpus, {}, fill);
  bfly::lda::TrainerOptions options;
  options.topics = s.topics;
  options.seed = s.seed;
  auto phase = std::chrono::steady_clock::now();
  engine->bind(corpus, options);
  std::printf("engine: %s\nbind (words made on the GPUs, kernels compiled): %.2f s\n", engine->name().c_str(),
              seconds_since(phase));
  for (std::size_t r = 0; r < engine->shards().size(); ++r)
    std::printf("  rank %zu: documents %lld .. %lld, %lld tokens\n", r,
                static_cast<long long>(engine->shards()[r].first_doc),
                static_cast<long long>(engine->shards()[r].last_doc - 1),
                static_cast<long long>(engine->shards()[r].tokens()));
  phase = std::chrono::steady_clock::now();
  {
    const std::vector<std::int32_t> z = starting_topics(corpus.num_tokens(), s.topics, s.seed);
    const double ll = engine->load(z, nullptr, nullptr, 0);
    std::printf("starting state (topics uploaded, counts, estimates): %.2f s, ll/token %.6f\n", seconds_since(phase),
                ll / static_cast<double>(corpus.num_tokens()));
  }

  std::FILE* csv = nullptr;
  if (!s.csv.empty()) {
    csv = std::fopen(s.csv.c_str(), "a");
    if (csv == nullptr) throw std::runtime_error("cannot open " + s.csv);
    if (std::ftell(csv) == 0)
      std::fputs("device,gpus,tokens,docs,vocab,topics,type,iteration,iteration_s,zstep_s,count_s,all_reduce_s,"
                 "estimate_s,tokens_per_s,ll_per_token\n",
                 csv);
  }
  std::vector<double> rates;
  const double tokens = static_cast<double>(corpus.num_tokens());
  for (int t = 1; t <= s.warmup + s.iterations; ++t) {
    phase = std::chrono::steady_clock::now();
    const auto step = engine->step(static_cast<std::uint32_t>(t));
    const double seconds = seconds_since(phase);
    if (step.report.invalid_tokens > 0)
      throw std::runtime_error(fmt::format("iteration {}: {} invalid tokens", t, step.report.invalid_tokens));
    const bfly::lda::IterationPhases& p = engine->last_phases();
    const bool timed = t > s.warmup;
    std::printf("iteration %2d%s  %.3f s  %7.1f Mtokens/s  z-step %.3f s  counts %.3f s  all-reduce %.3f s  "
                "estimates %.3f s  ll/token %.6f\n",
                t, timed ? " " : "*", seconds, tokens / seconds * 1e-6, p.zstep, p.count, p.all_reduce, p.estimate,
                step.log_likelihood / tokens);
    std::fflush(stdout);
    if (!timed) continue;
    rates.push_back(tokens / seconds);
    if (csv != nullptr)
      std::fprintf(csv, "%s,%d,%lld,%lld,%d,%d,%s,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6g,%.9g\n", device.c_str(), s.gpus,
                   static_cast<long long>(corpus.num_tokens()), static_cast<long long>(corpus.num_docs()),
                   corpus.vocab_size(), s.topics, s.type.c_str(), t, seconds, p.zstep, p.count, p.all_reduce,
                   p.estimate, tokens / seconds, step.log_likelihood / tokens);
  }
  if (csv != nullptr && std::fclose(csv) != 0) throw std::runtime_error("cannot write " + s.csv);
  std::sort(rates.begin(), rates.end());
  std::printf("median: %.1f Mtokens/s on %d GPU(s) (* = warm-up, not timed)\n", rates[rates.size() / 2] * 1e-6,
              s.gpus);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings s = parse(argc, argv);
    return s.type == "f32" ? run<float>(s) : run<double>(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lda-multi-gpu-bench: %s\n", e.what());
    return 1;
  }
}
