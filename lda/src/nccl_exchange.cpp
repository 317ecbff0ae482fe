// NcclExchange: NCCL opened with dlopen, the few functions bfly needs declared here (types as in nccl.h), and the
// device contexts of a multi-GPU process (see multi_gpu.hpp).
#include "bfly/lda/multi_gpu.hpp"

#include "device_context.hpp"

#include "bfly/jit/driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#if __has_include(<nccl.h>)
#include <nccl.h>  // only to check the declarations below against the toolkit's header, where it has one
#endif

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

namespace bfly::lda {
namespace detail {

void make_device_current(int ordinal) {
  const rt::Driver& d = rt::driver();
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  CUcontext context = nullptr;
  {
    const std::lock_guard lock(mutex);
    auto it = contexts.find(ordinal);
    if (it == contexts.end()) {
      int count = 0;
      rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
      if (ordinal < 0 || ordinal >= count)
        throw Error(fmt::format("CUDA device {} does not exist: the driver reports {} device(s)", ordinal, count));
      CUdevice device = 0;
      rt::check(d.DeviceGet(&device, ordinal), fmt::format("cuDeviceGet({})", ordinal));
      CUcontext retained = nullptr;
      rt::check(d.DevicePrimaryCtxRetain(&retained, device),
                fmt::format("cuDevicePrimaryCtxRetain(device {})", ordinal));
      it = contexts.emplace(ordinal, retained).first;
    }
    context = it->second;
  }
  rt::check(d.CtxSetCurrent(context), fmt::format("cuCtxSetCurrent(primary context of device {})", ordinal));
}

}  // namespace detail

namespace {

// The part of nccl.h bfly uses (NCCL 2.x ABI): results, the unique id, data types, the sum, and eight functions.
using ncclResult_t = int;
constexpr ncclResult_t ncclSuccess = 0;
struct ncclUniqueId {
  char internal[128];
};
static_assert(sizeof(ncclUniqueId) == std::tuple_size_v<NcclId>);
using ncclComm_t = struct ncclComm*;
using ncclDataType_t = int;
constexpr ncclDataType_t ncclInt32 = 2, ncclFloat64 = 8;
using ncclRedOp_t = int;
constexpr ncclRedOp_t ncclSum = 0;
using cudaStream_t = CUstream_st*;

#if __has_include(<nccl.h>)
static_assert(::ncclSuccess == ncclSuccess && ::ncclInt32 == ncclInt32 && ::ncclFloat64 == ncclFloat64 &&
              ::ncclSum == ncclSum && sizeof(::ncclUniqueId) == sizeof(ncclUniqueId));
#endif

struct Nccl {
  ncclResult_t (*GetVersion)(int*);
  const char* (*GetErrorString)(ncclResult_t);
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitAll)(ncclComm_t*, int, const int*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*AllReduce)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*AllGather)(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
};

Nccl load_nccl() {
  // NVLink multicast off unless the user chose otherwise: read by NCCL when a communicator starts.
  ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  const char* configured = std::getenv("BFLY_NCCL_LIBRARY");
  const std::string name = configured != nullptr && *configured != '\0' ? configured : "libnccl.so.2";
  // The handle is never closed: the function pointers are used for the life of the process.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    throw Error(fmt::format("--gpus needs NCCL, and {} could not be opened ({}); install NCCL (the libnccl2 "
                            "package, or pip's nvidia-nccl-cu12/cu13 wheel and its nvidia/nccl/lib on "
                            "LD_LIBRARY_PATH) or set BFLY_NCCL_LIBRARY to the library's path",
                            name, reason != nullptr ? reason : "unknown reason"));
  }
  Nccl n{};
  const auto resolve = [&](auto& pointer, const char* symbol) {
    void* address = dlsym(library, symbol);
    if (address == nullptr) throw Error(fmt::format("{} lacks {}: NCCL 2.x is needed", name, symbol));
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(address);
  };
  resolve(n.GetVersion, "ncclGetVersion");
  resolve(n.GetErrorString, "ncclGetErrorString");
  resolve(n.GetUniqueId, "ncclGetUniqueId");
  resolve(n.CommInitAll, "ncclCommInitAll");
  resolve(n.CommInitRank, "ncclCommInitRank");
  resolve(n.CommDestroy, "ncclCommDestroy");
  resolve(n.AllReduce, "ncclAllReduce");
  resolve(n.AllGather, "ncclAllGather");
  resolve(n.GroupStart, "ncclGroupStart");
  resolve(n.GroupEnd, "ncclGroupEnd");
  return n;
}

const Nccl& nccl() {
  static const Nccl loaded = load_nccl();  // a failed load throws, and the next call tries again
  return loaded;
}

void check_nccl(ncclResult_t result, std::string_view what) {
  if (result != ncclSuccess)
    throw Error(fmt::format("{} failed: NCCL error {} ({})", what, result, nccl().GetErrorString(result)));
}

}  // namespace

int gpu_count() {
  if (!rt::gpu_available()) return 0;
  int count = 0;
  rt::check(rt::driver().DeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

std::string nccl_version() {
  int version = 0;
  check_nccl(nccl().GetVersion(&version), "ncclGetVersion");
  // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9 (major * 1000 + minor * 100 + patch before).
  if (version >= 20900) return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  return fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100);
}

NcclId make_nccl_id() {
  ncclUniqueId id;
  check_nccl(nccl().GetUniqueId(&id), "ncclGetUniqueId");
  NcclId result;
  std::memcpy(result.data(), id.internal, result.size());
  return result;
}

struct NcclExchange::State {
  std::vector<ncclComm_t> comms;                 // one per local rank
  std::vector<rt::DeviceBuffer> send, receive;   // gather scratch, one per local rank (in its device)
  std::size_t gather_capacity = 0;               // doubles per rank the scratch holds
};

NcclExchange::NcclExchange(const std::vector<int>& devices)
    : world_size_(static_cast<int>(devices.size())), devices_(devices), state_(std::make_unique<State>()) {
  if (devices.empty()) throw Error("NcclExchange: no devices");
  for (int r = 0; r < world_size_; ++r) local_ranks_.push_back(r);
  for (const int device : devices) detail::make_device_current(device);  // the driver's contexts first
  state_->comms.resize(devices.size());
  check_nccl(nccl().CommInitAll(state_->comms.data(), world_size_, devices.data()),
             fmt::format("ncclCommInitAll({} devices)", world_size_));
}

NcclExchange::NcclExchange(int world_size, int rank, int device, const NcclId& id)
    : world_size_(world_size), local_ranks_{rank}, devices_{device}, state_(std::make_unique<State>()) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw Error(fmt::format("NcclExchange: rank {} of {} ranks is out of range", rank, world_size));
  detail::make_device_current(device);
  ncclUniqueId unique;
  std::memcpy(unique.internal, id.data(), id.size());
  state_->comms.resize(1);
  check_nccl(nccl().CommInitRank(&state_->comms[0], world_size, unique, rank),
             fmt::format("ncclCommInitRank(rank {} of {}, device {})", rank, world_size, device));
}

NcclExchange::~NcclExchange() {
  State& s = *state_;
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    detail::make_device_current(devices_[i]);  // the scratch is freed in its own device's context
    if (i < s.send.size()) s.send[i] = {};
    if (i < s.receive.size()) s.receive[i] = {};
    if (s.comms[i] != nullptr) nccl().CommDestroy(s.comms[i]);
  }
}

std::string NcclExchange::name() const {
  const bool all_local = static_cast<int>(local_ranks_.size()) == world_size_;
  return fmt::format("nccl {} ({} rank{}{})", nccl_version(), world_size_, world_size_ == 1 ? "" : "s",
                     all_local ? std::string() : fmt::format(", this is rank {}", local_ranks_[0]));
}

void NcclExchange::sum(std::span<std::int32_t* const> arrays, std::size_t count) {
  if (arrays.size() != state_->comms.size())
    throw Error(fmt::format("NcclExchange::sum: {} arrays for {} local ranks", arrays.size(), state_->comms.size()));
  const Nccl& n = nccl();
  check_nccl(n.GroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    detail::make_device_current(devices_[i]);
    // In place (send == receive), on the device's default stream: after the count kernels, before the estimates.
    check_nccl(n.AllReduce(arrays[i], arrays[i], count, ncclInt32, ncclSum, state_->comms[i], nullptr),
               "ncclAllReduce(counts)");
  }
  check_nccl(n.GroupEnd(), "ncclGroupEnd (all-reduce of the counts)");
}

void NcclExchange::gather(std::span<const double* const> send, std::size_t count, std::span<double> all) {
  State& s = *state_;
  if (send.size() != s.comms.size() || all.size() != static_cast<std::size_t>(world_size_) * count)
    throw Error(fmt::format("NcclExchange::gather: {} arrays and room for {} values, for {} local ranks of {} "
                            "ranks, {} values each",
                            send.size(), all.size(), s.comms.size(), world_size_, count));
  if (count == 0) return;
  const rt::Driver& d = rt::driver();
  if (count > s.gather_capacity) {
    s.send.resize(s.comms.size());
    s.receive.resize(s.comms.size());
    for (std::size_t i = 0; i < s.comms.size(); ++i) {
      detail::make_device_current(devices_[i]);
      s.send[i] = rt::DeviceBuffer(count * sizeof(double));
      s.receive[i] = rt::DeviceBuffer(static_cast<std::size_t>(world_size_) * count * sizeof(double));
    }
    s.gather_capacity = count;
  }
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    detail::make_device_current(devices_[i]);
    rt::check(d.MemcpyHtoD(s.send[i].get(), send[i], count * sizeof(double)), "cuMemcpyHtoD(gather)");
  }
  const Nccl& n = nccl();
  check_nccl(n.GroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    detail::make_device_current(devices_[i]);
    check_nccl(n.AllGather(reinterpret_cast<const void*>(s.send[i].get()), reinterpret_cast<void*>(s.receive[i].get()),
                           count, ncclFloat64, s.comms[i], nullptr),
               "ncclAllGather");
  }
  check_nccl(n.GroupEnd(), "ncclGroupEnd (all-gather)");
  // Every local rank received the same values; read local rank 0's (the copy waits for the gather).
  detail::make_device_current(devices_[0]);
  rt::check(d.MemcpyDtoH(all.data(), s.receive[0].get(), all.size() * sizeof(double)), "cuMemcpyDtoH(gather)");
}

}  // namespace bfly::lda
