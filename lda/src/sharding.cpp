// Shards balanced by tokens, and the in-process count exchange (see sharding.hpp).
#include "bfly/lda/sharding.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bfly::lda {

std::vector<Shard> shard_by_tokens(const Corpus& corpus, int shards) {
  if (shards < 1) throw Error(fmt::format("shard_by_tokens: the number of shards must be >= 1, got {}", shards));
  const std::int64_t D = corpus.num_docs();
  const std::int64_t tokens = corpus.num_tokens();
  // The first token of aligned document a * kShardAlignment (or the end).
  const std::int64_t aligned = (D + kShardAlignment - 1) / kShardAlignment;  // candidate starts 0 .. aligned
  auto start_doc = [&](std::int64_t a) { return std::min(D, a * kShardAlignment); };
  auto start_token = [&](std::int64_t a) { return corpus.doc_offsets[static_cast<std::size_t>(start_doc(a))]; };

  std::vector<std::int64_t> starts{0};  // in units of kShardAlignment documents
  for (int s = 1; s < shards; ++s) {
    // Integer target (no rounding differences between machines): tokens * s / shards.
    const std::int64_t target = static_cast<std::int64_t>(static_cast<__int128>(tokens) * s / shards);
    // Every shard gets at least one block while there are enough: shard s starts after shard s - 1 and leaves a
    // block to itself and to each later shard. With fewer blocks than shards, each takes the next block until
    // none is left, and the rest are empty.
    const std::int64_t lowest = std::min(starts.back() + 1, aligned);
    const std::int64_t highest = aligned >= shards ? aligned - (shards - s) : aligned;
    // The first start in [lowest, highest] whose token is >= target, or the one before it if that is nearer.
    std::int64_t lo = lowest, hi = highest;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (start_token(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    if (lo > lowest && target - start_token(lo - 1) < start_token(lo) - target) --lo;
    starts.push_back(lo);
  }
  std::vector<Shard> result;
  for (int s = 0; s < shards; ++s) {
    Shard shard;
    shard.first_doc = start_doc(starts[s]);
    shard.last_doc = s + 1 < shards ? start_doc(starts[s + 1]) : D;
    shard.first_token = corpus.doc_offsets[static_cast<std::size_t>(shard.first_doc)];
    shard.last_token = corpus.doc_offsets[static_cast<std::size_t>(shard.last_doc)];
    result.push_back(shard);
  }
  return result;
}

Corpus shard_corpus(const Corpus& corpus, const Shard& shard) {
  if (shard.first_doc < 0 || shard.first_doc > shard.last_doc || shard.last_doc > corpus.num_docs() ||
      shard.first_token != corpus.doc_offsets[static_cast<std::size_t>(shard.first_doc)] ||
      shard.last_token != corpus.doc_offsets[static_cast<std::size_t>(shard.last_doc)])
    throw Error(fmt::format("shard_corpus: documents [{}, {}) with tokens [{}, {}) are not a shard of this corpus "
                            "({} documents)",
                            shard.first_doc, shard.last_doc, shard.first_token, shard.last_token, corpus.num_docs()));
  Corpus part;
  part.vocab = corpus.vocab;
  part.doc_offsets.resize(static_cast<std::size_t>(shard.docs()) + 1);
  for (std::int64_t m = 0; m <= shard.docs(); ++m)
    part.doc_offsets[static_cast<std::size_t>(m)] = corpus.doc_offsets[static_cast<std::size_t>(shard.first_doc + m)] -
                                                    shard.first_token;
  if (!corpus.words.empty())  // a corpus whose words live on the devices has none here (multi_gpu.hpp)
    part.words.assign(corpus.words.begin() + shard.first_token, corpus.words.begin() + shard.last_token);
  if (!corpus.doc_ids.empty())
    part.doc_ids.assign(corpus.doc_ids.begin() + shard.first_doc, corpus.doc_ids.begin() + shard.last_doc);
  part.input_documents = shard.docs();
  part.first_token = corpus.first_token + shard.first_token;
  part.first_doc = corpus.first_doc + shard.first_doc;
  return part;
}

InProcessExchange::InProcessExchange(int ranks) {
  if (ranks < 1) throw Error(fmt::format("InProcessExchange: the number of ranks must be >= 1, got {}", ranks));
  for (int r = 0; r < ranks; ++r) ranks_.push_back(r);
}

std::string InProcessExchange::name() const {
  return fmt::format("in-process ({} rank{})", ranks_.size(), ranks_.size() == 1 ? "" : "s");
}

void InProcessExchange::sum(std::span<std::int32_t* const> arrays, std::size_t count) {
  if (arrays.size() != ranks_.size())
    throw Error(fmt::format("InProcessExchange::sum: {} arrays for {} ranks", arrays.size(), ranks_.size()));
  if (arrays.size() < 2) return;
  // Into rank 0's array, one rank after another, then copied back to the others. int32 like NCCL's ncclInt32: the
  // counts of one topic never exceed the corpus' tokens (below 2^31, checked when the run starts).
  for (std::size_t r = 1; r < arrays.size(); ++r)
    for (std::size_t i = 0; i < count; ++i) arrays[0][i] += arrays[r][i];
  for (std::size_t r = 1; r < arrays.size(); ++r) std::copy_n(arrays[0], count, arrays[r]);
}

void InProcessExchange::gather(std::span<const double* const> send, std::size_t count, std::span<double> all) {
  if (send.size() != ranks_.size() || all.size() != ranks_.size() * count)
    throw Error(fmt::format("InProcessExchange::gather: {} arrays and room for {} values, for {} ranks of {}",
                            send.size(), all.size(), ranks_.size(), count));
  for (std::size_t r = 0; r < send.size(); ++r)
    std::copy_n(send[r], count, all.begin() + static_cast<std::ptrdiff_t>(r * count));
}

}  // namespace bfly::lda
