// Corpus readers (UCI bag-of-words, plain text), the CSR checks and the length ordering.
#include "bfly/lda/corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <unistd.h>

namespace bfly::lda {

namespace {

std::string where(const std::string& file, long long line) {
  return line > 0 ? fmt::format("{}:{}: ", file, line) : fmt::format("{}: ", file);
}

std::string read_whole_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw CorpusError(path, 0, "is a directory; expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorpusError(path, 0, "cannot open the file for reading; check the path");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw CorpusError(path, 0, "read error");
  return std::move(buffer).str();
}

// Splits a file's text into lines (without '\n' and a trailing '\r'), numbering them from 1.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}

  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = text_.find('\n', pos_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = stop + 1;
    ++number_;
    return true;
  }
  long long number() const { return number_; }  // the number of the line `next` returned last

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  long long number_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `line` at whitespace into at most `max_fields` + 1 fields (one extra, to detect too many).
int split_fields(std::string_view line, std::string_view* fields, int max_fields) {
  int n = 0;
  std::size_t i = 0;
  while (i < line.size() && n <= max_fields) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (n < max_fields) fields[n] = line.substr(start, i - start);
    ++n;
  }
  return n;
}

bool parse_int(std::string_view text, long long& value) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// One header line of a docword file: a single integer >= minimum.
long long read_header_value(LineReader& lines, const std::string& path, const char* name, long long minimum) {
  std::string_view line;
  if (!lines.next(line))
    throw CorpusError(path, lines.number() + 1,
                      fmt::format("the file ends before the header line {} (expected D, W and NNZ, one per line "
                                  "at the top of a UCI docword file)",
                                  name));
  long long value = 0;
  if (!parse_int(trim(line), value) || value < minimum)
    throw CorpusError(path, lines.number(),
                      fmt::format("expected the header value {} (one integer >= {}), found \"{}\"", name, minimum,
                                  std::string(trim(line))));
  return value;
}

std::vector<std::string> read_vocab(const std::string& path, long long expected_words,
                                    const std::string& docword_path) {
  const std::string text = read_whole_file(path);
  LineReader lines(text);
  std::vector<std::string> vocab;
  vocab.reserve(static_cast<std::size_t>(std::min<long long>(expected_words, static_cast<long long>(text.size() / 2 + 1))));
  std::string_view line;
  while (lines.next(line)) {
    const std::string_view word = trim(line);
    if (static_cast<long long>(vocab.size()) == expected_words) {
      if (word.empty()) continue;  // trailing blank lines are fine
      throw CorpusError(path, lines.number(),
                        fmt::format("more words than W = {} (from {} line 2); the vocabulary and docword files "
                                    "must belong together",
                                    expected_words, docword_path));
    }
    if (word.empty())
      throw CorpusError(path, lines.number(), "empty line; expected one word per line");
    vocab.emplace_back(word);
  }
  if (static_cast<long long>(vocab.size()) < expected_words)
    throw CorpusError(path, lines.number() + 1,
                      fmt::format("the file ends after {} words, expected W = {} (from {} line 2); truncated file?",
                                  vocab.size(), expected_words, docword_path));
  return vocab;
}

struct Entry {
  std::int64_t doc;
  std::int32_t word;
  std::int32_t count;
};

// The longest document the kernels take: their per-document token counts are 32-bit.
constexpr std::int64_t kMaxDocumentTokens = INT32_MAX;

// Builds the CSR corpus from entries in file order, dropping documents without tokens. Only documents that have
// entries take memory (D comes from the header and may be huge); sizes are checked before allocating.
Corpus build_csr(const std::string& path, long long num_docs, std::vector<Entry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.doc < b.doc; });
  Corpus corpus;
  corpus.input_documents = num_docs;
  std::int64_t total = 0, length = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    length += entries[i].count;
    if (i + 1 == entries.size() || entries[i + 1].doc != entries[i].doc) {
      if (length > kMaxDocumentTokens)
        throw CorpusError(path, 0, fmt::format("document {} has {} tokens; documents of more than {} tokens are not "
                                               "supported (split it)",
                                               entries[i].doc + 1, length, kMaxDocumentTokens));
      total += length;
      corpus.doc_ids.push_back(entries[i].doc);
      corpus.doc_offsets.push_back(total);
      length = 0;
    }
  }
  check_memory(2.0 * static_cast<double>(total) * sizeof(std::int32_t),
               fmt::format("{}: the corpus ({} tokens)", path, total));
  corpus.words.resize(static_cast<std::size_t>(total));
  std::size_t at = 0;
  for (const Entry& e : entries) {
    std::fill_n(corpus.words.begin() + static_cast<std::ptrdiff_t>(at), e.count, e.word);
    at += static_cast<std::size_t>(e.count);
  }
  return corpus;
}

}  // namespace

void check_memory(double bytes, const std::string& what) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  if (bytes > memory)
    throw Error(fmt::format("{} needs {:.1f} GiB, more than this machine's {:.1f} GiB of memory", what,
                            bytes / (1u << 30), memory / (1u << 30)));
}

CorpusError::CorpusError(std::string file, long long line, const std::string& what)
    : Error(where(file, line) + what), file_(std::move(file)), line_(line) {}

std::int64_t Corpus::max_doc_length() const {
  std::int64_t longest = 0;
  for (std::int64_t m = 0; m < num_docs(); ++m) longest = std::max(longest, doc_length(m));
  return longest;
}

void Corpus::check() const {
  if (doc_offsets.empty() || doc_offsets.front() != 0)
    throw Error("corpus: doc_offsets must start with 0 (CSR form, D + 1 entries)");
  for (std::size_t m = 1; m < doc_offsets.size(); ++m)
    if (doc_offsets[m] < doc_offsets[m - 1])
      throw Error(fmt::format("corpus: doc_offsets decrease at document {}", m - 1));
  if (doc_offsets.back() != static_cast<std::int64_t>(words.size()))
    throw Error(fmt::format("corpus: doc_offsets end at {} but there are {} tokens", doc_offsets.back(),
                            words.size()));
  if (doc_ids.size() != static_cast<std::size_t>(num_docs()))
    throw Error(fmt::format("corpus: {} document ids for {} documents", doc_ids.size(), num_docs()));
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] < 0 || words[i] >= vocab_size())
      throw Error(fmt::format("corpus: token {} has word id {}, outside [0, V = {})", i, words[i], vocab_size()));
}

std::uint64_t Corpus::fingerprint() const {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  };
  const std::int64_t v = vocab_size();
  mix(&v, sizeof v);
  mix(doc_offsets.data(), doc_offsets.size() * sizeof(std::int64_t));
  mix(words.data(), words.size() * sizeof(std::int32_t));
  mix(doc_ids.data(), doc_ids.size() * sizeof(std::int64_t));
  for (const std::string& word : vocab) mix(word.c_str(), word.size() + 1);  // the words, each with its NUL
  return hash;
}

Corpus read_uci(const std::string& docword_path, const std::string& vocab_path, std::int64_t max_docs) {
  const std::string text = read_whole_file(docword_path);
  LineReader lines(text);
  const long long D = read_header_value(lines, docword_path, "D (number of documents)", 1);
  const long long W = read_header_value(lines, docword_path, "W (vocabulary size)", 1);
  const long long NNZ = read_header_value(lines, docword_path, "NNZ (number of docID wordID count lines)", 1);
  if (W > INT32_MAX)
    throw CorpusError(docword_path, 2, fmt::format("W = {} is larger than the supported {}", W, INT32_MAX));
  const long long kept_docs = max_docs > 0 ? std::min<long long>(D, max_docs) : D;

  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<long long>(NNZ, 1ll << 26)));
  long long seen = 0;
  std::string_view line;
  while (lines.next(line)) {
    std::string_view fields[3];
    const int n = split_fields(line, fields, 3);
    if (n == 0) continue;  // blank lines are skipped
    if (seen == NNZ)
      throw CorpusError(docword_path, lines.number(),
                        fmt::format("more entries than NNZ = {} (header line 3)", NNZ));
    ++seen;
    if (n != 3)
      throw CorpusError(docword_path, lines.number(),
                        fmt::format("expected three integers `docID wordID count`, found {} field{}", n,
                                    n == 1 ? "" : "s"));
    long long doc = 0, word = 0, count = 0;
    if (!parse_int(fields[0], doc) || doc < 1 || doc > D)
      throw CorpusError(docword_path, lines.number(),
                        fmt::format("docID \"{}\" is not an integer in [1, D = {}]", std::string(fields[0]), D));
    if (!parse_int(fields[1], word) || word < 1 || word > W)
      throw CorpusError(docword_path, lines.number(),
                        fmt::format("wordID \"{}\" is not an integer in [1, W = {}]", std::string(fields[1]), W));
    if (!parse_int(fields[2], count) || count < 1 || count > INT32_MAX)
      throw CorpusError(docword_path, lines.number(),
                        fmt::format("count \"{}\" is not a positive integer", std::string(fields[2])));
    if (doc <= kept_docs)
      entries.push_back({doc - 1, static_cast<std::int32_t>(word - 1), static_cast<std::int32_t>(count)});
  }
  if (seen < NNZ)
    throw CorpusError(docword_path, lines.number() + 1,
                      fmt::format("the file ends after {} of NNZ = {} entries (header line 3); truncated file?",
                                  seen, NNZ));

  Corpus corpus = build_csr(docword_path, kept_docs, entries);
  corpus.vocab = read_vocab(vocab_path, W, docword_path);
  if (corpus.num_tokens() == 0)
    throw CorpusError(docword_path, 0, "no tokens in the kept documents");
  corpus.check();
  return corpus;
}

const std::vector<std::string>& english_stop_words() {
  // The common English function words (articles, pronouns, auxiliaries, prepositions, conjunctions) plus a few
  // frequent contraction fragments left by splitting at apostrophes ("don t" -> "don").
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w{
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
        "can", "could", "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during", "each",
        "else", "ever", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven", "having",
        "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however", "i", "if", "in",
        "into", "is", "isn", "it", "its", "itself", "just", "ll", "may", "me", "might", "more", "most", "must",
        "mustn", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "one", "only", "or",
        "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "re", "same", "shall", "shan", "she",
        "should", "shouldn", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "themselves", "then", "there", "these", "they", "this", "those", "thou", "thee", "thy", "through", "to",
        "too", "under", "unto", "until", "up", "upon", "us", "ve", "very", "was", "wasn", "we", "were", "weren",
        "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "won", "would",
        "wouldn", "ye", "yet", "you", "your", "yours", "yourself", "yourselves"};
    std::sort(w.begin(), w.end());
    return w;
  }();
  return words;
}

Corpus read_text(const std::string& path, const TextOptions& options) {
  const std::string text = read_whole_file(path);
  const auto& stop = english_stop_words();
  auto is_stop = [&](const std::string& w) { return std::binary_search(stop.begin(), stop.end(), w); };

  // Pass 1: tokens as provisional ids (first appearance), per document.
  std::unordered_map<std::string, std::int32_t> provisional;
  std::vector<std::string> provisional_words;
  std::vector<std::int64_t> counts;
  std::vector<std::vector<std::int32_t>> docs;
  LineReader lines(text);
  std::string_view line;
  std::string word;
  while (lines.next(line)) {
    if (options.max_docs > 0 && static_cast<std::int64_t>(docs.size()) == options.max_docs) break;
    if (line.find('\0') != std::string_view::npos)
      throw CorpusError(path, lines.number(), "NUL byte: expected plain text, one document per line");
    std::vector<std::int32_t>& doc = docs.emplace_back();
    auto flush = [&] {
      if (static_cast<int>(word.size()) >= options.min_word_length && !(options.stop_words && is_stop(word))) {
        const auto [it, inserted] = provisional.try_emplace(word, static_cast<std::int32_t>(provisional.size()));
        if (inserted) {
          provisional_words.push_back(word);
          counts.push_back(0);
        }
        ++counts[it->second];
        doc.push_back(it->second);
      }
      word.clear();
    };
    for (const char c : line) {
      if (c >= 'a' && c <= 'z') word.push_back(c);
      else if (c >= 'A' && c <= 'Z') word.push_back(static_cast<char>(c - 'A' + 'a'));
      else flush();
    }
    flush();
    if (static_cast<std::int64_t>(doc.size()) > kMaxDocumentTokens)
      throw CorpusError(path, lines.number(), fmt::format("the document has {} tokens; documents of more than {} "
                                                          "tokens are not supported (split it)",
                                                          doc.size(), kMaxDocumentTokens));
  }
  if (docs.empty()) throw CorpusError(path, 0, "the file is empty; expected one document per line");

  // Final ids by decreasing frequency, ties alphabetical; rare words dropped.
  std::vector<std::int32_t> order(provisional_words.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return counts[a] != counts[b] ? counts[a] > counts[b] : provisional_words[a] < provisional_words[b];
  });
  std::vector<std::int32_t> final_id(provisional_words.size(), -1);
  Corpus corpus;
  for (const std::int32_t p : order) {
    if (counts[p] < options.min_count) break;
    final_id[p] = corpus.vocab_size();
    corpus.vocab.push_back(provisional_words[p]);
  }

  corpus.input_documents = static_cast<std::int64_t>(docs.size());
  for (std::size_t m = 0; m < docs.size(); ++m) {
    const std::size_t before = corpus.words.size();
    for (const std::int32_t p : docs[m])
      if (final_id[p] >= 0) corpus.words.push_back(final_id[p]);
    if (corpus.words.size() == before) continue;  // empty after filtering: dropped
    corpus.doc_ids.push_back(static_cast<std::int64_t>(m));
    corpus.doc_offsets.push_back(static_cast<std::int64_t>(corpus.words.size()));
  }
  if (corpus.num_tokens() == 0)
    throw CorpusError(path, 0,
                      fmt::format("no words left after dropping stop words, words shorter than {} letters and words "
                                  "seen fewer than {} times; lower --min-count?",
                                  options.min_word_length, options.min_count));
  corpus.check();
  return corpus;
}

Corpus sort_by_length(const Corpus& corpus) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(corpus.num_docs()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return corpus.doc_length(a) > corpus.doc_length(b); });
  Corpus sorted;
  sorted.vocab = corpus.vocab;
  sorted.input_documents = corpus.input_documents;
  sorted.words.reserve(corpus.words.size());
  sorted.doc_ids.reserve(order.size());
  for (const std::int64_t m : order) {
    sorted.words.insert(sorted.words.end(), corpus.words.begin() + corpus.doc_offsets[m],
                        corpus.words.begin() + corpus.doc_offsets[m + 1]);
    sorted.doc_offsets.push_back(static_cast<std::int64_t>(sorted.words.size()));
    sorted.doc_ids.push_back(corpus.doc_ids[m]);
  }
  return sorted;
}

std::vector<std::int64_t> input_order(const Corpus& corpus) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(corpus.num_docs()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return corpus.doc_ids[a] < corpus.doc_ids[b]; });
  return order;
}

}  // namespace bfly::lda
