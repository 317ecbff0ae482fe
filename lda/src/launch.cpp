// What a launch with one process per GPU needs before its NcclExchange: the process's rank from the environment
// and rank 0's NCCL id through a shared file (see multi_gpu.hpp).
#include "bfly/lda/multi_gpu.hpp"

#include "bfly/output_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace bfly::lda {
namespace {

// The integer value of environment variable `name` in [low, high]; throws naming it otherwise.
int environment_integer(const char* name, long low, long high) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0')
    throw Error(fmt::format("{} is not set, but the launcher set the other rank variables", name));
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < low || value > high)
    throw Error(fmt::format("{}=\"{}\" is not an integer in [{}, {}]", name, text, low, high));
  return static_cast<int>(value);
}

}  // namespace

std::optional<LaunchRank> launch_rank_from_environment() {
  struct Names {
    const char *rank, *world_size, *local_rank;
  };
  constexpr Names kLaunchers[] = {{"RANK", "WORLD_SIZE", "LOCAL_RANK"},  // torchrun
                                  {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                  {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}};
  for (const Names& names : kLaunchers) {
    if (std::getenv(names.rank) == nullptr) continue;
    LaunchRank launch;
    launch.world_size = environment_integer(names.world_size, 1, INT_MAX);
    launch.rank = environment_integer(names.rank, 0, launch.world_size - 1);
    launch.local_rank = environment_integer(names.local_rank, 0, launch.world_size - 1);
    return launch;
  }
  return std::nullopt;
}

NcclId share_nccl_id_through_file(const std::string& path, int rank, const std::function<NcclId()>& make,
                                  double timeout_seconds) {
  namespace fs = std::filesystem;
  NcclId id{};
  if (rank == 0) {
    std::error_code error;
    if (fs::exists(path, error))
      throw Error(fmt::format("{}: already exists (the NCCL id of an earlier run?); give each run a new path, e.g. "
                              "with the launcher's job id in it",
                              path));
    id = make();
    OutputFile out(path);  // a temporary in the same directory, renamed into place: readers never see half an id
    out.write(id.data(), id.size());
    out.commit();
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (auto wait = std::chrono::milliseconds(1);; wait = std::min(wait * 2, std::chrono::milliseconds(100))) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.data(), static_cast<std::streamsize>(id.size())) && in.peek() == std::ifstream::traits_type::eof())
      return id;
    if (std::chrono::steady_clock::now() > deadline)
      throw Error(fmt::format("{}: rank {} waited {} s for rank 0's NCCL id; is rank 0 running, and does every rank "
                              "see this path?",
                              path, rank, timeout_seconds));
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace bfly::lda
