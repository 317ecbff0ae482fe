// Data-parallel training, part 1: how a corpus is split into shards (one per rank: one GPU) and how the ranks add
// up their counts (CountExchange). data_parallel.hpp runs an iteration over the shards through these two.
//
// A rank owns a contiguous range of documents, so its tokens are contiguous too. Every draw depends only on the
// seed, the token (or document) index in the whole corpus and the iteration (reference.hpp), and the counts are
// integers, so a run on N ranks gives the same z, counts, theta and phi as a run on one.
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/reference.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bfly::lda {

// Documents [first_doc, last_doc) of a corpus and their tokens [first_token, last_token).
struct Shard {
  std::int64_t first_doc = 0, last_doc = 0;
  std::int64_t first_token = 0, last_token = 0;
  std::int64_t docs() const { return last_doc - first_doc; }
  std::int64_t tokens() const { return last_token - first_token; }
  friend bool operator==(const Shard&, const Shard&) = default;
};

// Shards start on multiples of this many documents (the last one ends at D): a multiple of every z-step kernel's
// lane group W (so a document keeps its lane, and the rounding of its sums, on any number of shards) and the
// log-likelihood's chunk (so the shards' partial sums add up in the order of a single run's).
inline constexpr std::int64_t kShardAlignment = kLogLikelihoodChunk;
static_assert(kShardAlignment % 32 == 0, "a shard must start on a lane-group boundary of every W (4 .. 32)");

// `shards` contiguous shards covering the corpus, balanced by tokens: shard s starts at the aligned document whose
// first token is nearest to s * tokens / shards, among the starts that leave every shard at least one block of
// kShardAlignment documents. With fewer blocks than shards, the first shards get one block each and the last ones
// are empty. Throws bfly::Error when `shards` < 1.
std::vector<Shard> shard_by_tokens(const Corpus& corpus, int shards);

// The documents of `shard` as a corpus of their own (offsets from 0, the whole vocabulary, first_token and
// first_doc set), for a rank's engine. A corpus without host words (made on the devices: multi_gpu.hpp) gives
// shards without them.
Corpus shard_corpus(const Corpus& corpus, const Shard& shard);

// How the ranks of a data-parallel run add up their counts and share small values. A process drives one or more
// ranks (its local ranks: all of them in a single-process run, one in a run launched with one process per GPU);
// every call passes one array per local rank, in local_ranks() order, and every rank of every process makes the
// same calls in the same order (the collective contract of NCCL and MPI).
class CountExchange {
 public:
  virtual ~CountExchange() = default;

  // A short name for progress lines, e.g. "in-process (3 ranks)" or "nccl 2.27.3 (2 ranks)".
  virtual std::string name() const = 0;
  // Ranks in the whole run, and the ranks this process drives (ascending).
  virtual int world_size() const = 0;
  virtual const std::vector<int>& local_ranks() const = 0;
  // True when sum() takes device arrays (each in its rank's GPU), false for host arrays.
  virtual bool device_memory() const = 0;

  // Element-wise sum over all ranks, in place: arrays[i] holds `count` values of local rank i and afterwards the
  // sum over every rank. Integer sums are exact, so the result does not depend on the order of the ranks.
  virtual void sum(std::span<std::int32_t* const> arrays, std::size_t count) = 0;

  // All-gather of host values: send[i] holds `count` values of local rank i; afterwards `all` holds
  // world_size() * count values, rank r's at r * count.
  virtual void gather(std::span<const double* const> send, std::size_t count, std::span<double> all) = 0;
};

// Every rank in this process, the arrays in host memory, summed one rank after another: the exchange of the CPU
// path and of the tests that prove the sharding.
class InProcessExchange final : public CountExchange {
 public:
  explicit InProcessExchange(int ranks);
  std::string name() const override;
  int world_size() const override { return static_cast<int>(ranks_.size()); }
  const std::vector<int>& local_ranks() const override { return ranks_; }
  bool device_memory() const override { return false; }
  void sum(std::span<std::int32_t* const> arrays, std::size_t count) override;
  void gather(std::span<const double* const> send, std::size_t count, std::span<double> all) override;

 private:
  std::vector<int> ranks_;
};

}  // namespace bfly::lda
