// The LDA corpus in CSR form and its readers: UCI bag-of-words (docword + vocab) and plain text (one document
// per line), plus ordering documents by length as the paper does (groups of W documents of similar length).
#pragma once

#include "bfly/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bfly::lda {

// Throws bfly::Error ("WHAT needs N GiB, more than this machine's M GiB of memory") when `bytes` cannot fit in the
// machine's memory: sizes from files and options are checked with it before allocating.
void check_memory(double bytes, const std::string& what);

// A malformed, truncated or unreadable input file. The message starts with "FILE:LINE: " (or "FILE: " when no
// line applies) and says what was expected; bfly-lda exits with status 2 for it.
class CorpusError : public Error {
 public:
  CorpusError(std::string file, long long line, const std::string& what);
  const std::string& file() const { return file_; }
  long long line() const { return line_; }  // 1-based; 0 when the error is about the whole file

 private:
  std::string file_;
  long long line_;
};

// D documents over a vocabulary of V words. Tokens doc_offsets[m] .. doc_offsets[m + 1] - 1 belong to document m;
// words[i] is the word id (0 <= id < V) of token i. The token index i is also the counter of its random draw, so
// a corpus and its token order together fix every draw of a run.
struct Corpus {
  std::vector<std::int64_t> doc_offsets{0};  // D + 1 entries, doc_offsets[0] = 0, non-decreasing
  std::vector<std::int32_t> words;           // one word id per token
  std::vector<std::string> vocab;            // V words; vocab[id] is the word of id
  std::vector<std::int64_t> doc_ids;         // per document, its 0-based position in the input file
  std::int64_t input_documents = 0;          // documents read from the input (before empty ones were dropped)
  // A shard of a larger corpus (sharding.hpp) is a corpus whose token 0 and document 0 are token first_token and
  // document first_doc of the whole: token i draws with the counter first_token + i and document m's random streams
  // use first_doc + m, so a shard draws exactly what the whole corpus draws for the same tokens. 0 for a whole corpus.
  std::int64_t first_token = 0, first_doc = 0;

  std::int64_t num_docs() const { return static_cast<std::int64_t>(doc_offsets.size()) - 1; }
  std::int64_t num_tokens() const { return doc_offsets.back(); }
  std::int32_t vocab_size() const { return static_cast<std::int32_t>(vocab.size()); }
  std::int64_t doc_length(std::int64_t m) const { return doc_offsets[m + 1] - doc_offsets[m]; }
  std::int64_t max_doc_length() const;
  std::int64_t dropped_documents() const { return input_documents - num_docs(); }

  // Throws bfly::Error if the CSR arrays are inconsistent (offsets, word ids out of range, sizes).
  void check() const;
  // A 64-bit fingerprint of the token arrays, vocabulary (size and words), document ids (FNV-1a); checkpoints carry it
  // so that a run is never resumed on a different corpus.
  std::uint64_t fingerprint() const;
};

// Reads a UCI bag-of-words corpus: `docword` holds the lines D, W, NNZ, then NNZ lines `docID wordID count`
// (1-based ids, any order, repeated pairs add up); `vocab` holds W lines, one word each. Each (doc, word, count)
// entry becomes `count` consecutive tokens. Documents without tokens are dropped (input_documents keeps the
// count). `max_docs` > 0 keeps only documents with docID <= max_docs. Throws CorpusError naming file and line.
Corpus read_uci(const std::string& docword_path, const std::string& vocab_path, std::int64_t max_docs = 0);

// How plain text becomes tokens.
struct TextOptions {
  int min_count = 2;        // words seen fewer times than this in the whole (kept) text are dropped
  int min_word_length = 2;  // shorter words are dropped (single letters are mostly noise)
  bool stop_words = true;   // drop the built-in English stop words
  std::int64_t max_docs = 0;  // > 0: read only the first max_docs lines (documents)
};

// Reads plain text, one document per line: ASCII letters are lower-cased, every other byte (digits, punctuation,
// non-ASCII) separates words; stop words, short words and rare words are dropped, then documents left empty are
// dropped. Word ids are assigned by decreasing frequency (ties alphabetical). Throws CorpusError for an
// unreadable file, a NUL byte (binary file) or a text without any word left.
Corpus read_text(const std::string& path, const TextOptions& options = {});

// The built-in English stop words, sorted.
const std::vector<std::string>& english_stop_words();

// The corpus with its documents ordered by decreasing length (ties keep input order), so that the W documents
// of a lane group have similar lengths. doc_ids travel with the documents, so outputs can be written in input
// order (see input_order).
Corpus sort_by_length(const Corpus& corpus);

// For each document of `corpus` in input order, its index in `corpus`: rows of theta are written in this order.
std::vector<std::int64_t> input_order(const Corpus& corpus);

}  // namespace bfly::lda
