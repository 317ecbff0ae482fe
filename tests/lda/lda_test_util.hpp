// Helpers of the bfly-lda tests: scratch directories, small files, and small corpora built in memory.
#pragma once

#include "corpus.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace bfly::lda::test {

// A fresh directory under the test's temp dir, named after the running test.
inline std::filesystem::path scratch_dir(const std::string& tag = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name() + tag;
  for (char& c : name)
    if (c == '/') c = '_';
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "bfly-lda-tests" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

// A corpus of `docs` documents with 1..max_length tokens of uniformly random words.
inline Corpus random_corpus(std::int64_t docs, int vocab, int max_length, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Corpus corpus;
  for (int w = 0; w < vocab; ++w) corpus.vocab.push_back(std::to_string(w).insert(0, "w"));
  std::uniform_int_distribution<int> length(1, max_length), word(0, vocab - 1);
  for (std::int64_t m = 0; m < docs; ++m) {
    const int n = length(rng);
    for (int i = 0; i < n; ++i) corpus.words.push_back(word(rng));
    corpus.doc_offsets.push_back(static_cast<std::int64_t>(corpus.words.size()));
    corpus.doc_ids.push_back(m);
  }
  corpus.input_documents = docs;
  corpus.check();
  return corpus;
}

// The body of a UCI docword file for `corpus` (one line per token, count 1) and its vocabulary file.
inline std::string docword_text(const Corpus& corpus) {
  std::string text = std::to_string(corpus.num_docs()) + "\n" + std::to_string(corpus.vocab_size()) + "\n" +
                     std::to_string(corpus.num_tokens()) + "\n";
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m)
    for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i)
      text += std::to_string(m + 1) + " " + std::to_string(corpus.words[i] + 1) + " 1\n";
  return text;
}
inline std::string vocab_text(const Corpus& corpus) {
  std::string text;
  for (const std::string& w : corpus.vocab) text += w + "\n";
  return text;
}

}  // namespace bfly::lda::test
