// Corpus readers: good UCI and text files are read as expected; malformed or truncated ones are rejected with an
// error that names the file and the line; documents are ordered by length with their input ids.
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using bfly::lda::Corpus;
using bfly::lda::CorpusError;
using namespace bfly::lda::test;

std::vector<std::int32_t> doc_words(const Corpus& c, std::int64_t m) {
  return {c.words.begin() + c.doc_offsets[m], c.words.begin() + c.doc_offsets[m + 1]};
}

const char* kGoodDocword = "3\n4\n5\n1 1 2\n1 3 1\n3 2 1\n3 4 3\n2 1 1\n";
const char* kGoodVocab = "apple\nbanana\ncherry\ndate\n";

TEST(UciReader, ReadsCountsAsConsecutiveTokens) {
  const auto dir = scratch_dir();
  const Corpus c = bfly::lda::read_uci(write_file(dir / "docword.txt", kGoodDocword),
                                       write_file(dir / "vocab.txt", kGoodVocab));
  ASSERT_EQ(c.num_docs(), 3);
  EXPECT_EQ(c.vocab_size(), 4);
  EXPECT_EQ(c.num_tokens(), 8);
  EXPECT_EQ(doc_words(c, 0), (std::vector<std::int32_t>{0, 0, 2}));
  EXPECT_EQ(doc_words(c, 1), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(doc_words(c, 2), (std::vector<std::int32_t>{1, 3, 3, 3}));
  EXPECT_EQ(c.vocab[3], "date");
  EXPECT_EQ(c.doc_ids, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(c.max_doc_length(), 4);
}

TEST(UciReader, DropsEmptyDocumentsAndHonoursMaxDocs) {
  const auto dir = scratch_dir();
  const std::string vocab = write_file(dir / "vocab.txt", "a\nb\n");
  const std::string docword = write_file(dir / "docword.txt", "4\n2\n3\n1 1 1\n3 2 2\r\n4 1 1\n\n");
  const Corpus all = bfly::lda::read_uci(docword, vocab);
  EXPECT_EQ(all.input_documents, 4);
  EXPECT_EQ(all.num_docs(), 3);
  EXPECT_EQ(all.dropped_documents(), 1);
  EXPECT_EQ(all.doc_ids, (std::vector<std::int64_t>{0, 2, 3}));
  const Corpus first = bfly::lda::read_uci(docword, vocab, 2);
  EXPECT_EQ(first.input_documents, 2);
  EXPECT_EQ(first.num_docs(), 1);
  EXPECT_EQ(first.num_tokens(), 1);
}

struct BadUci {
  const char* name;
  const char* docword;
  const char* vocab;
  bool error_in_vocab;
  long long line;
  const char* says;
};

class UciRejects : public ::testing::TestWithParam<BadUci> {};

TEST_P(UciRejects, NamingFileAndLine) {
  const BadUci& bad = GetParam();
  const auto dir = scratch_dir();
  const std::string docword = write_file(dir / "docword.bad.txt", bad.docword);
  const std::string vocab = write_file(dir / "vocab.bad.txt", bad.vocab);
  try {
    bfly::lda::read_uci(docword, vocab);
    FAIL() << "accepted a bad corpus";
  } catch (const CorpusError& e) {
    const std::string& file = bad.error_in_vocab ? vocab : docword;
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), bad.line) << e.what();
    const std::string prefix = file + ":" + std::to_string(bad.line) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(bad.says), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadFiles, UciRejects,
    ::testing::Values(
        BadUci{"HeaderNotANumber", "3\nfour\n5\n", "a\n", false, 2, "W (vocabulary size)"},
        BadUci{"HeaderMissing", "3\n4\n", "a\nb\nc\nd\n", false, 3, "ends before the header"},
        BadUci{"EmptyFile", "", "a\n", false, 1, "ends before the header"},
        BadUci{"DocIdOutOfRange", "3\n4\n2\n1 1 1\n9 1 1\n", "a\nb\nc\nd\n", false, 5, "docID \"9\""},
        BadUci{"WordIdZero", "3\n4\n2\n1 1 1\n2 0 1\n", "a\nb\nc\nd\n", false, 5, "wordID \"0\""},
        BadUci{"CountZero", "3\n4\n1\n1 1 0\n", "a\nb\nc\nd\n", false, 4, "count \"0\""},
        BadUci{"NotAnInteger", "3\n4\n2\n1 1 1\n2 x 1\n", "a\nb\nc\nd\n", false, 5, "wordID \"x\""},
        BadUci{"LineCutShort", "3\n4\n2\n1 1 1\n2 3", "a\nb\nc\nd\n", false, 5, "three integers"},
        BadUci{"TooManyFields", "3\n4\n1\n1 1 1 7\n", "a\nb\nc\nd\n", false, 4, "three integers"},
        BadUci{"Truncated", "3\n4\n5\n1 1 1\n2 2 1\n3 3 1\n", "a\nb\nc\nd\n", false, 7, "after 3 of NNZ = 5"},
        BadUci{"MoreThanNnz", "3\n4\n1\n1 1 1\n2 2 1\n", "a\nb\nc\nd\n", false, 5, "more entries than NNZ"},
        BadUci{"VocabTruncated", "3\n4\n1\n1 1 1\n", "a\nb\n", true, 3, "after 2 words, expected W = 4"},
        BadUci{"VocabTooLong", "3\n2\n1\n1 1 1\n", "a\nb\nc\n", true, 3, "more words than W = 2"},
        BadUci{"VocabEmptyLine", "3\n3\n1\n1 1 1\n", "a\n\nc\n", true, 2, "empty line"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(UciReader, MissingFileIsNamed) {
  const auto dir = scratch_dir();
  const std::string missing = (dir / "nope.txt").string();
  try {
    bfly::lda::read_uci(missing, missing);
    FAIL();
  } catch (const CorpusError& e) {
    EXPECT_EQ(e.file(), missing);
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

TEST(TextReader, TokenisesDropsStopWordsAndEmptyDocuments) {
  const auto dir = scratch_dir();
  const std::string path = write_file(dir / "docs.txt",
                                      "The cat sat on the MAT.\nDogs, and cats!\n\n123 456 x\nthe cat and the dog's "
                                      "mat\n");
  bfly::lda::TextOptions options;
  options.min_count = 1;
  const Corpus c = bfly::lda::read_text(path, options);
  EXPECT_EQ(c.input_documents, 5);
  EXPECT_EQ(c.num_docs(), 3);  // line 3 is empty, line 4 has digits and a single letter only
  EXPECT_EQ(c.doc_ids, (std::vector<std::int64_t>{0, 1, 4}));
  // Ids by decreasing frequency, ties alphabetical: cat 2, mat 2, then cats, dog, dogs, sat ("s" is too short).
  EXPECT_EQ(c.vocab, (std::vector<std::string>{"cat", "mat", "cats", "dog", "dogs", "sat"}));
  EXPECT_EQ(doc_words(c, 0), (std::vector<std::int32_t>{0, 5, 1}));
  EXPECT_EQ(doc_words(c, 1), (std::vector<std::int32_t>{4, 2}));
  EXPECT_EQ(doc_words(c, 2), (std::vector<std::int32_t>{0, 3, 1}));

  options.min_count = 2;  // only cat and mat remain; "Dogs, and cats!" becomes empty
  const Corpus frequent = bfly::lda::read_text(path, options);
  EXPECT_EQ(frequent.vocab, (std::vector<std::string>{"cat", "mat"}));
  EXPECT_EQ(frequent.doc_ids, (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(frequent.dropped_documents(), 3);

  options.max_docs = 2;
  options.min_count = 1;
  EXPECT_EQ(bfly::lda::read_text(path, options).num_docs(), 2);
}

TEST(TextReader, RejectsBinaryAndWordlessFiles) {
  const auto dir = scratch_dir();
  const std::string binary = write_file(dir / "binary.txt", std::string("fine line\nbad\0line\n", 19));
  try {
    bfly::lda::read_text(binary);
    FAIL();
  } catch (const CorpusError& e) {
    EXPECT_EQ(e.file(), binary);
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find(binary + ":2: NUL byte"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bfly::lda::read_text(write_file(dir / "stop.txt", "the and of\nit is\n")), CorpusError);
  EXPECT_THROW(bfly::lda::read_text(write_file(dir / "empty.txt", "")), CorpusError);
}

TEST(TextReader, StopWordsAreSortedLowerCase) {
  const auto& words = bfly::lda::english_stop_words();
  EXPECT_TRUE(std::is_sorted(words.begin(), words.end()));
  EXPECT_TRUE(std::binary_search(words.begin(), words.end(), "the"));
  for (const std::string& w : words)
    for (const char ch : w) EXPECT_TRUE(ch >= 'a' && ch <= 'z') << w;
}

TEST(SortByLength, LongestFirstStableWithIds) {
  const Corpus c = random_corpus(50, 10, 12, 7);
  const Corpus s = bfly::lda::sort_by_length(c);
  ASSERT_EQ(s.num_docs(), c.num_docs());
  EXPECT_EQ(s.num_tokens(), c.num_tokens());
  for (std::int64_t m = 0; m + 1 < s.num_docs(); ++m) {
    EXPECT_GE(s.doc_length(m), s.doc_length(m + 1));
    if (s.doc_length(m) == s.doc_length(m + 1)) {
      EXPECT_LT(s.doc_ids[m], s.doc_ids[m + 1]);
    }
  }
  for (std::int64_t m = 0; m < s.num_docs(); ++m) EXPECT_EQ(doc_words(s, m), doc_words(c, s.doc_ids[m]));
  const std::vector<std::int64_t> order = bfly::lda::input_order(s);
  for (std::int64_t row = 0; row < c.num_docs(); ++row) EXPECT_EQ(s.doc_ids[order[row]], row);
  EXPECT_NE(s.fingerprint(), c.fingerprint());
  EXPECT_EQ(s.fingerprint(), bfly::lda::sort_by_length(c).fingerprint());
}

}  // namespace
