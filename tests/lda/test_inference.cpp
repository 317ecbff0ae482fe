// Inference, evaluation and hyperparameter learning on the CPU: inference with phi fixed recovers the topic mixtures
// of documents generated from known topics (CPU reference z-step and the GPU's generated kernel run on the CPU),
// reproducibly; perplexity by document completion and NPMI agree with direct float64 computations; Minka's fixed
// point recovers a known asymmetric alpha and a known beta; a model round-trips through a run's directory; and
// bfly-lda infer / evaluate / --holdout write what they say.
#include "bfly/lda/evaluation.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/hyperparameters.hpp"
#include "bfly/lda/inference.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

namespace {

using namespace bfly::lda;
using namespace bfly::lda::test;

// Documents drawn from known topics with known mixtures: topic k puts 90 % of its mass on its own block of words.
struct Generated {
  Model model;                // the true phi, alpha
  Corpus documents;           // in the model's vocabulary
  std::vector<double> theta;  // D x K, the mixtures the documents were drawn from
};

Generated generate(int K, int V, int D, int length, std::vector<double> alpha, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  g.model.alpha = std::move(alpha);
  g.model.beta = 0.01;
  g.model.phi.assign(static_cast<std::size_t>(V) * K, 0.1 / V);
  const int own = V / K;
  for (int k = 0; k < K; ++k)
    for (int r = 0; r < own; ++r) g.model.phi[static_cast<std::size_t>(k * own + r) * K + k] += 0.9 / own;
  for (int w = 0; w < V; ++w) g.model.vocab.push_back("w" + std::to_string(w));
  g.documents.vocab = g.model.vocab;
  std::vector<std::discrete_distribution<int>> word_of;
  for (int k = 0; k < K; ++k) {
    std::vector<double> column(static_cast<std::size_t>(V));
    for (int w = 0; w < V; ++w) column[w] = g.model.phi[static_cast<std::size_t>(w) * K + k];
    word_of.emplace_back(column.begin(), column.end());
  }
  for (int m = 0; m < D; ++m) {
    std::vector<double> theta(static_cast<std::size_t>(K));
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += theta[k] = std::gamma_distribution<double>(g.model.alpha[k], 1.0)(rng) + 1e-300;
    for (double& t : theta) t /= sum;
    g.theta.insert(g.theta.end(), theta.begin(), theta.end());
    std::discrete_distribution<int> topic_of(theta.begin(), theta.end());
    for (int i = 0; i < length; ++i) g.documents.words.push_back(word_of[topic_of(rng)](rng));
    g.documents.doc_offsets.push_back(static_cast<std::int64_t>(g.documents.words.size()));
    g.documents.doc_ids.push_back(m);
  }
  g.documents.input_documents = D;
  g.documents.check();
  return g;
}

double mean_l1(const std::vector<double>& a, const std::vector<double>& b, int K) {
  double total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) total += std::abs(a[i] - b[i]);
  return total / static_cast<double>(a.size() / K);
}

template <typename T>
Inference infer_reference(const Model& model, const Corpus& documents, InferenceOptions options, int threads = 2) {
  const auto zstep = with_fixed_phi<T>(std::make_unique<CpuZStep<T>>(threads));
  options.threads = threads;  // the documents' theta updates too
  return infer_with<T>(model, documents, options, *zstep);
}

TEST(Inference, RecoversTheMixturesOfDocumentsFromKnownTopics) {
  const Generated g = generate(4, 80, 60, 300, {0.5, 0.5, 0.5, 0.5}, 101);
  const Inference inferred = infer_reference<double>(
      [&] { Model m = g.model; m.type = bfly::gen::ElementType::f64; return m; }(), g.documents,
      {.iterations = 60, .seed = 3});
  ASSERT_EQ(inferred.theta.size(), g.theta.size());
  // A document of 300 tokens pins its mixture to a few hundredths per topic; the 10 % spread of each topic over
  // all words blurs it a little more. A uniform guess is 0.9 away on average.
  std::vector<double> uniform(g.theta.size(), 0.25);
  EXPECT_LT(mean_l1(inferred.theta, g.theta, 4), 0.12);
  EXPECT_GT(mean_l1(uniform, g.theta, 4), 0.6);
  for (std::size_t m = 0; m < g.theta.size() / 4; ++m) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += inferred.theta[m * 4 + k];
    EXPECT_NEAR(sum, 1.0, 1e-9) << "document " << m;
  }
}

TEST(Inference, GeneratedKernelOnTheCpuRecoversTheMixturesLikeTheReference) {
  // K = 16 f32 is compiled in by default (CMake's BFLY_LDA_CPU_KERNELS); the documents are long, so the spec is
  // the one for long documents.
  const Generated g = generate(16, 160, 24, 200, std::vector<double>(16, 0.2), 7);
  const auto spec = gpu_z_spec<float>(16, {}, mean_document_length(g.documents));
  const CompiledZKernel* kernel = find_compiled_z_kernel(spec);
  if (kernel == nullptr) GTEST_SKIP() << "the kernel for K = 16 f32 is not compiled into this build";
  const InferenceOptions options{.iterations = 30, .seed = 5};
  const auto generated = with_fixed_phi<float>(std::make_unique<GeneratedCpuZStep<float>>(*kernel, 2));
  const Inference from_kernel = infer_with<float>(g.model, g.documents, options, *generated);
  const Inference from_reference = infer_reference<float>(g.model, g.documents, options);
  EXPECT_LT(mean_l1(from_kernel.theta, g.theta, 16), 0.3);
  // Same uniforms, same theta and phi: the draws differ only where rounding of the sums meets a boundary, so the
  // two inferences agree far more closely than either agrees with the truth.
  EXPECT_LT(mean_l1(from_kernel.theta, from_reference.theta, 16), 0.02);
  EXPECT_NE(from_kernel.engine.find("bfly_lda_z_doc"), std::string::npos) << from_kernel.engine;
}

TEST(Inference, IsReproducibleBySeedWhateverTheThreadCount) {
  const Generated g = generate(5, 50, 300, 30, std::vector<double>(5, 0.3), 11);  // enough for several threads
  const InferenceOptions options{.iterations = 20, .seed = 9};
  const Inference a = infer_reference<float>(g.model, g.documents, options, 1);
  const Inference b = infer_reference<float>(g.model, g.documents, options, 3);
  EXPECT_EQ(a.theta, b.theta);
  const Inference c = infer_reference<float>(g.model, g.documents, {.iterations = 20, .seed = 10}, 1);
  EXPECT_NE(a.theta, c.theta);
  // With Dirichlet draws of theta between z-steps (Estimate::draw) too.
  Model draw_model = g.model;
  draw_model.estimate = Estimate::draw;
  const Inference d = infer_reference<float>(draw_model, g.documents, options, 1);
  const Inference e = infer_reference<float>(draw_model, g.documents, options, 2);
  EXPECT_EQ(d.theta, e.theta);
  EXPECT_NE(d.theta, a.theta);
}

TEST(Inference, RejectsWordsOutsideTheModelAndInconsistentModels) {
  Generated g = generate(3, 30, 5, 10, {0.1, 0.1, 0.1}, 2);
  Corpus bad = g.documents;
  bad.words[0] = 30;
  bad.vocab.push_back("extra");
  EXPECT_THROW(infer_reference<float>(g.model, bad, {}), bfly::Error);
  Model broken = g.model;
  broken.phi[0] += 0.5;  // topic 0 no longer sums to 1
  EXPECT_THROW(infer_reference<float>(broken, g.documents, {}), bfly::Error);
  EXPECT_THROW(infer_reference<float>(g.model, g.documents, {.iterations = 10, .burn_in = 10}), bfly::Error);
}

TEST(Inference, MapsNewDocumentsIntoTheModelVocabulary) {
  Corpus own;
  own.vocab = {"zebra", "apple", "river"};
  own.words = {0, 1, 2, 0, 0};
  own.doc_offsets = {0, 3, 4, 5};
  own.doc_ids = {0, 1, 2};
  own.input_documents = 3;
  const Corpus mapped = in_vocabulary(own, {"river", "apple", "stone"});
  EXPECT_EQ(mapped.words, (std::vector<std::int32_t>{1, 0}));  // zebra is unknown; documents 1 and 2 are empty
  EXPECT_EQ(mapped.doc_offsets, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(mapped.doc_ids, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(mapped.input_documents, 3);
}

TEST(Evaluation, CompletionSplitAlternatesTokensAndSkipsOneTokenDocuments) {
  const Corpus corpus = random_corpus(50, 20, 9, 4);
  const CompletionSplit split = split_for_completion(corpus);
  std::int64_t kept = 0;
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    if (corpus.doc_length(m) < 2) continue;
    for (std::int64_t i = 0; i < corpus.doc_length(m); ++i) {
      const Corpus& part = i % 2 == 0 ? split.observed : split.scored;
      EXPECT_EQ(part.words[part.doc_offsets[kept] + i / 2], corpus.words[corpus.doc_offsets[m] + i]);
    }
    EXPECT_EQ(split.observed.doc_length(kept), (corpus.doc_length(m) + 1) / 2);
    EXPECT_EQ(split.scored.doc_length(kept), corpus.doc_length(m) / 2);
    EXPECT_EQ(split.scored.doc_ids[kept], corpus.doc_ids[m]);
    ++kept;
  }
  EXPECT_EQ(split.observed.num_docs(), kept);
  EXPECT_EQ(split.scored.num_docs(), kept);
}

TEST(Evaluation, PerplexityIsTheDirectLogPredictiveOfTheScoredTokens) {
  const Generated g = generate(4, 40, 30, 40, {0.2, 0.4, 0.6, 0.8}, 23);
  const auto zstep = with_fixed_phi<float>(std::make_unique<CpuZStep<float>>(2));
  const EvaluationOptions options{.inference = {.iterations = 30, .seed = 4}, .top_words = 5};
  const Evaluation e = evaluate_with<float>(g.model, g.documents, g.documents, options, *zstep);
  // The same inference on the observed halves, then log sum_k theta phi over the scored halves in long double.
  const CompletionSplit split = split_for_completion(g.documents);
  const Inference inferred = infer_reference<float>(g.model, split.observed, options.inference);
  long double direct = 0;
  std::int64_t tokens = 0;
  for (std::int64_t m = 0; m < g.documents.num_docs(); ++m)
    for (std::int64_t i = g.documents.doc_offsets[m] + 1; i < g.documents.doc_offsets[m + 1]; i += 2, ++tokens) {
      long double p = 0;
      for (int k = 0; k < 4; ++k)
        p += static_cast<long double>(inferred.theta[m * 4 + k]) * g.model.phi[g.documents.words[i] * 4 + k];
      direct += std::log(p);
    }
  EXPECT_EQ(e.scored_tokens, tokens);
  EXPECT_EQ(e.documents, g.documents.num_docs());
  EXPECT_NEAR(e.log_likelihood, static_cast<double>(direct), 1e-9 * std::abs(static_cast<double>(direct)));
  EXPECT_NEAR(e.perplexity, std::exp(-static_cast<double>(direct) / tokens), 1e-9 * e.perplexity);
  // The true topics predict the scored halves better than topics with their words shuffled.
  Model shuffled = g.model;
  std::mt19937 rng(5);
  std::vector<int> order(40);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int w = 0; w < 40; ++w)
    for (int k = 0; k < 4; ++k) shuffled.phi[w * 4 + k] = g.model.phi[order[w] * 4 + k];
  const Evaluation worse = evaluate_with<float>(shuffled, g.documents, g.documents, options, *zstep);
  EXPECT_GT(worse.perplexity, 1.2 * e.perplexity);
  EXPECT_GT(e.npmi, worse.npmi);
}

TEST(Evaluation, NpmiAgreesWithADirectComputation) {
  const Corpus corpus = random_corpus(300, 25, 8, 31);
  std::vector<std::set<std::int32_t>> docs(static_cast<std::size_t>(corpus.num_docs()));
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m)
    docs[m].insert(corpus.words.begin() + corpus.doc_offsets[m], corpus.words.begin() + corpus.doc_offsets[m + 1]);
  std::mt19937 rng(8);
  std::vector<std::vector<std::int32_t>> topics(6);
  for (auto& topic : topics) {
    std::vector<std::int32_t> all(25);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    topic.assign(all.begin(), all.begin() + 7);
  }
  const std::vector<double> npmi = topic_npmi(topics, corpus);
  ASSERT_EQ(npmi.size(), topics.size());
  const double D = static_cast<double>(corpus.num_docs());
  for (std::size_t t = 0; t < topics.size(); ++t) {
    double sum = 0;
    int pairs = 0;
    for (std::size_t a = 0; a < topics[t].size(); ++a)
      for (std::size_t b = a + 1; b < topics[t].size(); ++b, ++pairs) {
        double da = 0, db = 0, both = 0;
        for (const auto& d : docs) {
          const bool x = d.count(topics[t][a]) > 0, y = d.count(topics[t][b]) > 0;
          da += x, db += y, both += x && y;
        }
        sum += both == 0 ? -1.0 : std::log((both / D) / ((da / D) * (db / D))) / -std::log(both / D);
      }
    EXPECT_NEAR(npmi[t], sum / pairs, 1e-12) << "topic " << t;
  }
  // The ends of the scale: words always together score 1, words never together -1.
  Corpus pairs;
  pairs.vocab = {"a", "b", "c", "d"};
  pairs.words = {0, 1, 2, 0, 1, 3};
  pairs.doc_offsets = {0, 3, 6};
  pairs.doc_ids = {0, 1};
  pairs.input_documents = 2;
  EXPECT_DOUBLE_EQ(topic_npmi({{0, 1}}, pairs)[0], 1.0);
  EXPECT_DOUBLE_EQ(topic_npmi({{2, 3}}, pairs)[0], -1.0);
}

TEST(Evaluation, DocumentSplitIsDisjointDeterministicAndNearTheFraction) {
  const Corpus corpus = random_corpus(2000, 30, 5, 17);
  const DocumentSplit a = split_documents(corpus, 0.2, 1), b = split_documents(corpus, 0.2, 1);
  EXPECT_EQ(a.heldout.doc_ids, b.heldout.doc_ids);
  EXPECT_EQ(a.training.num_docs() + a.heldout.num_docs(), corpus.num_docs());
  EXPECT_EQ(a.training.num_tokens() + a.heldout.num_tokens(), corpus.num_tokens());
  EXPECT_NEAR(static_cast<double>(a.heldout.num_docs()) / 2000.0, 0.2, 0.03);
  std::set<std::int64_t> ids(a.training.doc_ids.begin(), a.training.doc_ids.end());
  for (const std::int64_t id : a.heldout.doc_ids) EXPECT_EQ(ids.count(id), 0u);
  EXPECT_NE(split_documents(corpus, 0.2, 2).heldout.doc_ids, a.heldout.doc_ids);
  EXPECT_THROW(split_documents(corpus, 1.0, 1), bfly::Error);
}

TEST(Hyperparameters, MinkaFixedPointRecoversAKnownAsymmetricAlpha) {
  const std::vector<double> truth = {0.05, 0.1, 0.2, 0.4, 0.8, 1.6};
  const int K = 6, D = 4000;
  std::mt19937_64 rng(77);
  std::vector<std::int32_t> counts;
  std::vector<std::int64_t> lengths;
  std::uniform_int_distribution<int> length_of(20, 80);
  for (int d = 0; d < D; ++d) {
    std::vector<double> theta(K);
    for (int k = 0; k < K; ++k) theta[k] = std::gamma_distribution<double>(truth[k], 1.0)(rng) + 1e-300;
    std::discrete_distribution<int> topic(theta.begin(), theta.end());
    std::vector<std::int32_t> n(K, 0);
    const int N = length_of(rng);
    for (int i = 0; i < N; ++i) ++n[topic(rng)];
    counts.insert(counts.end(), n.begin(), n.end());
    lengths.push_back(N);
  }
  const std::vector<double> learned =
      optimize_alpha(counts, lengths, std::vector<double>(K, 0.1), {.fixed_point_steps = 200});
  for (int k = 0; k < K; ++k) EXPECT_NEAR(learned[k], truth[k], 0.12 * truth[k]) << "alpha[" << k << "]";
}

TEST(Hyperparameters, MinkaFixedPointRecoversAKnownBeta) {
  const double truth = 0.05;
  const int K = 20, V = 300, tokens_per_topic = 3000;
  std::mt19937_64 rng(78);
  std::vector<std::int32_t> word_topic(static_cast<std::size_t>(V) * K, 0);
  std::vector<std::int64_t> totals(K, tokens_per_topic);
  for (int k = 0; k < K; ++k) {
    std::vector<double> phi(V);
    for (double& p : phi) p = std::gamma_distribution<double>(truth, 1.0)(rng) + 1e-300;
    std::discrete_distribution<int> word(phi.begin(), phi.end());
    for (int i = 0; i < tokens_per_topic; ++i) ++word_topic[static_cast<std::size_t>(word(rng)) * K + k];
  }
  EXPECT_NEAR(optimize_beta(word_topic, totals, 0.5, {.fixed_point_steps = 200}), truth, 0.12 * truth);
  EXPECT_THROW(optimize_beta(word_topic, totals, -1.0), bfly::Error);
  EXPECT_THROW(optimize_alpha(word_topic, totals, std::vector<double>(3, 0.1)), bfly::Error);
}

// bfly-lda itself: a run with --holdout writes metrics.json; infer and evaluate read its directory.
std::string run_lda(const std::string& arguments, const std::filesystem::path& dir, int* status) {
  const std::string log = (dir / "run.log").string();
  const int raw = std::system((std::string("'") + BFLY_LDA_EXE + "' " + arguments + " > '" + log + "' 2>&1").c_str());
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return read_file(log);
}

TEST(ModelCommands, HoldoutInferAndEvaluateWorkOnARunsDirectory) {
  const std::filesystem::path dir = scratch_dir();
  const Generated g = generate(4, 40, 200, 30, std::vector<double>(4, 0.3), 41);
  const std::string corpus = "--docword '" + write_file(dir / "docword.txt", docword_text(g.documents)) +
                             "' --vocab '" + write_file(dir / "vocab.txt", vocab_text(g.documents)) + "'";
  int status = -1;
  std::string output = run_lda(corpus + " --topics 4 --alpha 0.3 --iterations 40 --quiet --holdout 0.25 --device cpu "
                               "--cpu-zstep reference --out '" + (dir / "run").string() + "'", dir, &status);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("held-out perplexity"), std::string::npos) << output;
  const std::string metrics = read_file(dir / "run" / "metrics.json");
  EXPECT_NE(metrics.find("\"heldout_perplexity\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\"iteration\": 40"), std::string::npos) << metrics;

  const Model model = load_model((dir / "run").string());
  EXPECT_EQ(model.topics(), 4);
  EXPECT_EQ(model.vocab, g.documents.vocab);
  EXPECT_DOUBLE_EQ(model.alpha[2], 0.3);
  write_alpha((dir / "run").string(), std::vector<double>{0.1, 0.2, 0.3, 0.4});
  EXPECT_DOUBLE_EQ(load_model((dir / "run").string()).alpha[3], 0.4);

  output = run_lda("infer --model '" + (dir / "run").string() + "' " + corpus + " --iterations 20 --device cpu --out '" +
                       (dir / "inferred").string() + "'", dir, &status);
  ASSERT_EQ(status, 0) << output;
  const std::string theta = read_file(dir / "inferred" / "theta.bin");
  ASSERT_EQ(theta.size(), 32u + 200u * 4u * 8u) << output;  // f64, one row per input document
  EXPECT_EQ(theta.substr(0, 8), "BFLYMAT1");

  output = run_lda("evaluate --model '" + (dir / "run").string() + "' " + corpus + " --device cpu --out '" +
                       (dir / "scored").string() + "'", dir, &status);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(read_file(dir / "scored" / "metrics.json").find("\"npmi\""), std::string::npos);

  output = run_lda("infer " + corpus, dir, &status);
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("--model"), std::string::npos) << output;
  output = run_lda("infer --model '" + (dir / "nowhere").string() + "' " + corpus + " --out '" + (dir / "x").string() + "'",
                   dir, &status);
  EXPECT_EQ(status, 2) << output;
}

}  // namespace
