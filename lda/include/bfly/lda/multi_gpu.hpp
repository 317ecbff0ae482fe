// Data-parallel training on several GPUs (data_parallel.hpp): a rank per GPU, its shard's z-step, counts and
// estimates through the same kernels as the one-GPU engine, and the counts summed by NCCL.
//
// NCCL is opened at run time with dlopen (like libcuda, jit/src/driver.cpp): binaries start without libnccl and
// say what is missing only when NCCL is asked for. The library is BFLY_NCCL_LIBRARY when set, else libnccl.so.2
// on the loader's path (the NCCL package, or the nvidia-nccl wheel's nvidia/nccl/lib). Before NCCL starts, the
// process sets NCCL_NVLS_ENABLE=0 unless the user set it: NVLink multicast (NVLS) stays off on shared machines.
#pragma once

#include "bfly/lda/data_parallel.hpp"
#include "bfly/lda/gpu_engine.hpp"

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bfly::lda {

// The number of CUDA devices (0 without a driver or device).
int gpu_count();

// NCCL's version as "2.27.3", loading the library; throws bfly::Error saying what is missing when it cannot.
std::string nccl_version();

// The identifier every rank of a run needs to join it (ncclUniqueId: 128 opaque bytes). Rank 0 makes it
// (make_nccl_id) and the launcher hands it to the others, e.g. through a file on a shared filesystem or a TCP
// store (docs/MULTI_GPU.md).
using NcclId = std::array<char, 128>;
NcclId make_nccl_id();

// The place of this process in a launch with one process per GPU: `rank` of `world_size`, `local_rank` among the
// ranks of its node (its CUDA device).
struct LaunchRank {
  int rank = 0, world_size = 1, local_rank = 0;
};

// The LaunchRank the launcher set in the environment: torchrun's RANK, WORLD_SIZE and LOCAL_RANK, else Open MPI's
// OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE and OMPI_COMM_WORLD_LOCAL_RANK, else Slurm's SLURM_PROCID,
// SLURM_NTASKS and SLURM_LOCALID; nullopt when none of them is set. Throws bfly::Error naming the variable when one
// is missing or not an integer in range.
std::optional<LaunchRank> launch_rank_from_environment();

// Hands rank 0's NcclId to every rank through a file that all ranks see (a shared filesystem across nodes): rank 0
// calls `make` (normally make_nccl_id) and publishes the id at `path` atomically (a temporary name, then rename);
// the other ranks wait for the file, up to `timeout_seconds`. Every rank returns the same id. The path must be new
// for each run (put the launcher's job id in it): rank 0 refuses to replace an earlier run's file.
NcclId share_nccl_id_through_file(const std::string& path, int rank, const std::function<NcclId()>& make,
                                  double timeout_seconds = 300);

// CountExchange through NCCL: ncclAllReduce (ncclInt32, ncclSum) for the counts, ncclAllGather (ncclFloat64) for
// the small host values (through device scratch), one NCCL group per call over the local ranks.
class NcclExchange final : public CountExchange {
 public:
  // A single-process run over `devices` (CUDA ordinals): local ranks 0 .. devices.size() - 1 (ncclCommInitAll).
  explicit NcclExchange(const std::vector<int>& devices);
  // One rank of a multi-process run (ncclCommInitRank): `rank` of `world_size`, on CUDA device `device`, joining
  // the run of `id`. Blocks until every rank has joined.
  NcclExchange(int world_size, int rank, int device, const NcclId& id);
  ~NcclExchange() override;
  NcclExchange(const NcclExchange&) = delete;
  NcclExchange& operator=(const NcclExchange&) = delete;

  std::string name() const override;
  int world_size() const override { return world_size_; }
  const std::vector<int>& local_ranks() const override { return local_ranks_; }
  bool device_memory() const override { return true; }
  void sum(std::span<std::int32_t* const> arrays, std::size_t count) override;
  void gather(std::span<const double* const> send, std::size_t count, std::span<double> all) override;

  const std::vector<int>& devices() const { return devices_; }  // the CUDA device of each local rank

 private:
  struct State;
  int world_size_ = 0;
  std::vector<int> local_ranks_, devices_;
  std::unique_ptr<State> state_;
};

// Writes the word ids of a shard's tokens on its device, for corpora too large to pass through the host (the
// multi-GPU bench generates a billion tokens this way). Called by bind() in the shard's device context with the
// shard, its device offsets (whole-corpus token indices, shard.num_docs() + 1 of them) and `words` such that
// words[t] is the slot of whole-corpus token t; the shard's host words are then not read (they may be empty).
using DeviceWordsFill = std::function<void(const Corpus& shard, const long long* doc_offsets, int* words)>;

// A rank on CUDA device `device`: the one-GPU engine's kernels (LdaZStep, LdaIteration) on its shard. With
// `fill`, the words are made on the device instead of copied from the shard's host words.
template <typename T>
std::unique_ptr<ShardEngine<T>> gpu_shard_engine(int device, const GpuEngineOptions& options = {},
                                                 DeviceWordsFill fill = {});

// bfly-lda --gpus N: a DataParallelEngine over devices 0 .. N-1 of this process, counts summed by NCCL. Throws
// bfly::Error naming what is missing (NCCL, driver, devices).
template <typename T>
std::unique_ptr<DataParallelEngine<T>> multi_gpu_engine(int gpus, const GpuEngineOptions& options = {},
                                                        DeviceWordsFill fill = {});

}  // namespace bfly::lda
