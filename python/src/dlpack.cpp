// GPU arrays of frameworks other than PyTorch and CuPy, through DLPack (JAX, and any object with __dlpack__ and
// __dlpack_device__): bfly's own stream per device, the weights received on it, the draws allocated here and
// exported with __dlpack__ so that the consumer's stream waits for the kernel.
//
// Ordering, end to end (docs/PYTHON.md, "JAX and other DLPack arrays"):
//   1. weights.__dlpack__(stream=S), S this module's stream of the weights' device: the producer makes S wait until
//      the weights are ready (JAX: an event wait, no host block);
//   2. the kernel is enqueued on S, then an event E is recorded on S (DeviceDraws::finish);
//   3. draws.__dlpack__(stream=C) by the consumer makes C wait for E (cuStreamWaitEvent; C = None: the legacy
//      default stream, -1: no wait), so whatever the consumer enqueues on C reads finished draws.
// The weights' DLPack reference is held by the draws until the draws are released, and the draws' memory is
// freed only after E has completed, so neither is reused by its owner while the kernel may still read or write it.
#include "dlpack.hpp"

#include "device.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// DLPack's device types and the CUDA stream values of the Python protocol (dmlc.github.io/dlpack, python_spec).
constexpr int kDLCPU = 1;
constexpr int kDLCUDA = 2;
constexpr std::intptr_t kLegacyDefaultStream = 1;
constexpr std::intptr_t kPerThreadDefaultStream = 2;
constexpr std::intptr_t kNoSynchronization = -1;

// The driver entry points for streams and events, which bfly::rt::Driver does not hold, from the libcuda.so.1
// that bfly::rt::driver() opened.
struct StreamDriver {
  decltype(&::cuStreamCreate) StreamCreate;
  decltype(&::cuEventCreate) EventCreate;
  decltype(&::cuEventDestroy) EventDestroy;
  decltype(&::cuEventRecord) EventRecord;
  decltype(&::cuEventSynchronize) EventSynchronize;
  decltype(&::cuStreamWaitEvent) StreamWaitEvent;
};

const StreamDriver& stream_driver() {
  static const StreamDriver loaded = [] {
    bfly::rt::driver();  // opens libcuda.so.1 and initialises it, or throws naming why not
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) throw bfly::Error("libcuda.so.1 is not loaded");
    StreamDriver d{};
    auto resolve = [library](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      if (function == nullptr) throw bfly::Error(fmt::format("libcuda.so.1 has no {}", name));
    };
    resolve(d.StreamCreate, "cuStreamCreate");
    resolve(d.EventCreate, "cuEventCreate");
    resolve(d.EventDestroy, "cuEventDestroy_v2");
    resolve(d.EventRecord, "cuEventRecord");
    resolve(d.EventSynchronize, "cuEventSynchronize");
    resolve(d.StreamWaitEvent, "cuStreamWaitEvent");
    return d;
  }();
  return loaded;
}

// bfly's stream on `device`: a non-blocking stream of its primary context, created on first use and kept.
CUstream bfly_stream(int device) {
  static std::mutex mutex;
  static std::map<int, CUstream> streams;
  std::lock_guard lock(mutex);
  if (const auto it = streams.find(device); it != streams.end()) return it->second;
  ContextScope scope(device);
  CUstream stream = nullptr;
  bfly::rt::check(stream_driver().StreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  streams.emplace(device, stream);
  return stream;
}

// The dtype of a DLPack array as NumPy names it ("float32", "bfloat16", ...), or "" for one bfly never takes.
std::string dtype_name(nb::dlpack::dtype t) {
  if (t.lanes != 1) return "";
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (code == Code::Float && t.bits == 16) return "float16";
  if (code == Code::Float && t.bits == 32) return "float32";
  if (code == Code::Float && t.bits == 64) return "float64";
  if (code == Code::Bfloat && t.bits == 16) return "bfloat16";
  if (code == Code::Int) return fmt::format("int{}", t.bits);
  if (code == Code::UInt) return fmt::format("uint{}", t.bits);
  return fmt::format("DLPack type code {} of {} bits", t.code, t.bits);
}

// An array received through DLPack (the capsule of a __dlpack__ call), referenced until this object is released.
class DlpackArray {
 public:
  explicit DlpackArray(nb::ndarray<> array) : array_(std::move(array)) {}

  std::uintptr_t pointer() const { return reinterpret_cast<std::uintptr_t>(array_.data()); }
  std::vector<std::int64_t> shape() const {
    std::vector<std::int64_t> shape(array_.ndim());
    for (std::size_t i = 0; i < shape.size(); ++i) shape[i] = static_cast<std::int64_t>(array_.shape(i));
    return shape;
  }
  std::vector<std::int64_t> strides() const {  // in elements
    std::vector<std::int64_t> strides(array_.ndim());
    for (std::size_t i = 0; i < strides.size(); ++i) strides[i] = array_.stride(i);
    return strides;
  }
  std::string dtype() const { return dtype_name(array_.dtype()); }
  int device_type() const { return array_.device_type(); }
  int device_id() const { return array_.device_id(); }

 private:
  nb::ndarray<> array_;
};

// DLPack's DLManagedTensor (the legacy, unversioned capsule "dltensor"), laid out as dlpack.h declares it.
struct ManagedTensor {
  nb::dlpack::dltensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};

// int32 draws in device memory of their own, written by kernels on bfly's stream and exported through DLPack.
class DeviceDraws {
 public:
  // shape: (M,) or (M, n), row-major (draw d of row r at r * n + d, the layout of the kernels' out).
  DeviceDraws(int device, std::vector<std::int64_t> shape)
      : device_(device), shape_(std::move(shape)) {
    if (shape_.empty() || shape_.size() > 2) throw bfly::Error("DeviceDraws: the shape must have 1 or 2 entries");
    std::int64_t count = 1;
    for (const std::int64_t n : shape_) {
      if (n < 0) throw bfly::Error("DeviceDraws: a negative extent");
      count *= n;
    }
    strides_ = shape_.size() == 1 ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{shape_[1], 1};
    ContextScope scope(device_);
    bfly::rt::check(stream_driver().EventCreate(&done_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (count > 0) {
      const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(std::int32_t);
      bfly::rt::check(bfly::rt::driver().MemAlloc(&memory_, bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
    }
  }
  DeviceDraws(const DeviceDraws&) = delete;
  DeviceDraws& operator=(const DeviceDraws&) = delete;
  // Waits for the kernels that write the draws (a consumer that dropped them early must not free memory still
  // written), then frees the memory; `inputs_` (the weights' DLPack references) are released after that.
  ~DeviceDraws() {
    try {
      ContextScope scope(device_);
      if (done_ != nullptr) stream_driver().EventSynchronize(done_);
      if (memory_ != 0) bfly::rt::driver().MemFree(memory_);
      if (done_ != nullptr) stream_driver().EventDestroy(done_);
    } catch (const bfly::Error&) {  // the driver is gone (process exit): nothing to free into
    }
  }

  std::uintptr_t pointer() const { return static_cast<std::uintptr_t>(memory_); }
  int device() const { return device_; }
  std::vector<std::int64_t> shape() const { return shape_; }

  // After the kernels were enqueued on `stream`: records the event consumers wait for and keeps `inputs` (the
  // weights' DlpackArray) referenced for as long as the draws live.
  void finish(std::uintptr_t stream, std::vector<nb::object> inputs) {
    ContextScope scope(device_);
    bfly::rt::check(stream_driver().EventRecord(done_, reinterpret_cast<CUstream>(stream)), "cuEventRecord");
    inputs_ = std::move(inputs);
  }

  std::tuple<int, int> dlpack_device() const { return {kDLCUDA, device_}; }

  // The DLPack protocol's __dlpack__: the consumer's `stream` waits for the draws; a legacy capsule, no copy.
  nb::capsule dlpack(nb::handle self, nb::object stream, nb::object max_version, nb::object dl_device,
                     nb::object copy) {
    (void)max_version;  // a legacy capsule serves every consumer version
    if (!copy.is_none() && nb::cast<bool>(copy))
      throw nb::buffer_error("bfly's draws are exported without a copy (copy=True was asked)");
    if (!dl_device.is_none()) {
      const auto [type, id] = nb::cast<std::tuple<int, int>>(dl_device);
      if (type != kDLCUDA || id != device_)
        throw nb::buffer_error(fmt::format("bfly's draws are on CUDA device {}; dl_device = ({}, {}) needs a copy",
                                           device_, type, id).c_str());
    }
    const std::intptr_t consumer = stream.is_none() ? kLegacyDefaultStream : nb::cast<std::intptr_t>(stream);
    if (consumer == 0)
      throw nb::value_error("stream = 0 is ambiguous for CUDA in the DLPack protocol; pass 1 (the legacy default "
                            "stream), 2 (per-thread default), -1 (no synchronisation) or a stream handle");
    if (consumer != kNoSynchronization) {
      const CUstream wait = consumer == kLegacyDefaultStream      ? CU_STREAM_LEGACY
                            : consumer == kPerThreadDefaultStream ? CU_STREAM_PER_THREAD
                                                                  : reinterpret_cast<CUstream>(consumer);
      ContextScope scope(device_);
      bfly::rt::check(stream_driver().StreamWaitEvent(wait, done_, 0), "cuStreamWaitEvent");
    }
    auto* exported = new Exported{};
    exported->owner = nb::borrow(self);
    exported->tensor.dl_tensor.data = reinterpret_cast<void*>(memory_);
    exported->tensor.dl_tensor.device = {kDLCUDA, device_};
    exported->tensor.dl_tensor.ndim = static_cast<std::int32_t>(shape_.size());
    exported->tensor.dl_tensor.dtype = nb::dtype<std::int32_t>();
    exported->shape = shape_;
    exported->strides = strides_;
    exported->tensor.dl_tensor.shape = exported->shape.data();
    exported->tensor.dl_tensor.strides = exported->strides.data();
    exported->tensor.manager_ctx = exported;
    exported->tensor.deleter = &Exported::release;
    // A capsule that no consumer took (a consumer renames it "used_dltensor") still owns its tensor.
    PyObject* capsule = PyCapsule_New(&exported->tensor, "dltensor", [](PyObject* object) {
      if (PyCapsule_IsValid(object, "dltensor")) {
        auto* tensor = static_cast<ManagedTensor*>(PyCapsule_GetPointer(object, "dltensor"));
        tensor->deleter(tensor);
      }
    });
    if (capsule == nullptr) {
      delete exported;
      throw nb::python_error();
    }
    return nb::steal<nb::capsule>(capsule);
  }

 private:
  // What one exported capsule owns: a reference to the DeviceDraws and the shape and strides it points to.
  struct Exported {
    ManagedTensor tensor{};
    nb::object owner;
    std::vector<std::int64_t> shape, strides;

    // DLPack's deleter, called by the consumer from any thread, with or without the GIL.
    static void release(ManagedTensor* tensor) {
      auto* exported = static_cast<Exported*>(tensor->manager_ctx);
      if (!Py_IsInitialized()) return;  // at exit: nothing left to release into
      PyGILState_STATE state = PyGILState_Ensure();
      delete exported;
      PyGILState_Release(state);
    }
  };

  int device_;
  std::vector<std::int64_t> shape_, strides_;
  CUdeviceptr memory_ = 0;
  CUevent done_ = nullptr;
  std::vector<nb::object> inputs_;
};

}  // namespace

void bind_dlpack(nb::module_& m) {
  m.def("dlpack_stream", [](int device) { return reinterpret_cast<std::uintptr_t>(bfly_stream(device)); },
        "device"_a, "bfly's stream on a CUDA device: non-blocking, of its primary context, for DLPack arrays.");

  nb::class_<DlpackArray>(m, "DlpackArray")
      .def(nb::init<nb::ndarray<>>(), "capsule"_a)
      .def_prop_ro("pointer", &DlpackArray::pointer)
      .def_prop_ro("shape", &DlpackArray::shape)
      .def_prop_ro("strides", &DlpackArray::strides)
      .def_prop_ro("dtype", &DlpackArray::dtype)
      .def_prop_ro("device_type", &DlpackArray::device_type)
      .def_prop_ro("device_id", &DlpackArray::device_id);

  nb::class_<DeviceDraws>(m, "DeviceDraws")
      .def(nb::init<int, std::vector<std::int64_t>>(), "device"_a, "shape"_a)
      .def_prop_ro("pointer", &DeviceDraws::pointer)
      .def_prop_ro("device", &DeviceDraws::device)
      .def_prop_ro("shape", &DeviceDraws::shape)
      .def("finish", &DeviceDraws::finish, "stream"_a, "inputs"_a)
      .def("__dlpack_device__", &DeviceDraws::dlpack_device)
      .def(
          "__dlpack__",
          [](nb::handle self, nb::object stream, nb::object max_version, nb::object dl_device, nb::object copy) {
            return nb::cast<DeviceDraws&>(self).dlpack(self, stream, max_version, dl_device, copy);
          },
          nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
          "dl_device"_a = nb::none(), "copy"_a = nb::none());
}
