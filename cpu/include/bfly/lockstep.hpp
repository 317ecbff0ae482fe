// Lockstep CPU execution of CUDA source: include this before generated kernel source to compile it as C++
// and run it on the CPU, the threads of each CTA as fibers and the lanes of each warp in lockstep at every
// warp-synchronous call (__shfl_sync, __shfl_xor_sync, __ballot_sync, __any_sync, __all_sync, __syncwarp,
// __reduce_max_sync).
//
//   #include "bfly/lockstep.hpp"
//   #include "generated_kernel.cu"
//   bfly::lockstep::launch(my_kernel, dim3(grid), dim3(threads), args...);
//
// A lane that leaves a warp-synchronous call while others wait in it, or lanes that meet different calls,
// stop the run with a message naming the CTA, warp and call (on a GPU that would be undefined behaviour).
// Under gdb, break in the kernel and print threadIdx, blockIdx or any register array as usual.
#pragma once

#include "bfly/cpu/thread_stacks.hpp"
#include "bfly/jit/environment.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BFLY_LOCKSTEP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(BFLY_LOCKSTEP_ASAN)
#define BFLY_LOCKSTEP_ASAN 1
#endif
#ifndef BFLY_LOCKSTEP_ASAN
#define BFLY_LOCKSTEP_ASAN 0
#endif
#if BFLY_LOCKSTEP_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>  // rintf, fmaf, ... as the CUDA math library offers them to device code
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pthread.h>

#if defined(__x86_64__)
#include <sys/mman.h>
#else
#include <ucontext.h>
#endif

// ---------------------------------------------------------------------------------------------------------
// CUDA vocabulary
// ---------------------------------------------------------------------------------------------------------
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))

namespace bfly::lockstep {

// ---------------------------------------------------------------------------------------------------------
// Fibers: one stack per CUDA thread; switching saves only what the ABI says a callee keeps.
// ---------------------------------------------------------------------------------------------------------
#if defined(__x86_64__)
extern "C" void bfly_lockstep_switch(void** save_sp, void* load_sp);
extern "C" void bfly_lockstep_trampoline();
// Saves rbp, rbx, r12-r15, MXCSR and the x87 control word, swaps stacks, restores the same. A new fiber's
// stack is laid out as if it had switched out just before entering the trampoline, which calls r12(rbx).
asm(R"(
  .text
  .weak bfly_lockstep_switch
  .type bfly_lockstep_switch,@function
bfly_lockstep_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size bfly_lockstep_switch, .-bfly_lockstep_switch
  .weak bfly_lockstep_trampoline
  .type bfly_lockstep_trampoline,@function
bfly_lockstep_trampoline:
  movq %rbx, %rdi
  andq $-16, %rsp
  callq *%r12
  ud2
  .size bfly_lockstep_trampoline, .-bfly_lockstep_trampoline
)");
#endif

class Fiber {
 public:
  static constexpr std::size_t kStackBytes = 256 * 1024;

  Fiber() {
#if defined(__x86_64__)
    // One guard page below the stack turns an overflow into a fault instead of silent corruption.
    mapping_ = static_cast<char*>(mmap(nullptr, kStackBytes + kGuard, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (mapping_ == MAP_FAILED) fail("cannot allocate a fiber stack");
    mprotect(mapping_, kGuard, PROT_NONE);
#else
    stack_.reset(new char[kStackBytes]);
#endif
  }
  ~Fiber() {
#if defined(__x86_64__)
    munmap(mapping_, kStackBytes + kGuard);
#endif
  }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares the fiber to run entry(arg) on its next resume.
  void reset(void (*entry)(void*), void* arg) {
#if BFLY_LOCKSTEP_ASAN
    // The stack is reused: AddressSanitizer's poisoning of the last CUDA thread's frames would stay and be reported
    // as errors of the next one.
    __asan_unpoison_memory_region(stack_bottom(), kStackBytes);
#endif
#if defined(__x86_64__)
    auto* top = reinterpret_cast<std::uint64_t*>(mapping_ + kGuard + kStackBytes);
    std::uint64_t* sp = top;
    *--sp = 0;                                                   // alignment slot
    *--sp = reinterpret_cast<std::uint64_t>(&bfly_lockstep_trampoline);
    *--sp = 0;                                                   // rbp
    *--sp = reinterpret_cast<std::uint64_t>(arg);                // rbx: the argument
    *--sp = reinterpret_cast<std::uint64_t>(entry);              // r12: the entry point
    *--sp = 0;                                                   // r13
    *--sp = 0;                                                   // r14
    *--sp = 0;                                                   // r15
    *--sp = 0x037F00001F80ull;                                   // MXCSR default, x87 control word default
    sp_ = sp;
#else
    getcontext(&context_);
    context_.uc_stack.ss_sp = stack_.get();
    context_.uc_stack.ss_size = kStackBytes;
    context_.uc_link = nullptr;
    makecontext(&context_, reinterpret_cast<void (*)()>(entry), 1, arg);
#endif
  }

  // Runs this fiber until it calls yield_to(scheduler).
  void resume(Fiber& scheduler) {
#if defined(__x86_64__)
    bfly_lockstep_switch(&scheduler.sp_, sp_);
#else
    swapcontext(&scheduler.context_, &context_);
#endif
  }
  void yield_to(Fiber& scheduler) {
#if defined(__x86_64__)
    bfly_lockstep_switch(&sp_, scheduler.sp_);
#else
    swapcontext(&context_, &scheduler.context_);
#endif
  }

  [[noreturn]] static void fail(const std::string& message) {
    std::fprintf(stderr, "bfly lockstep: %s\n", message.c_str());
    std::abort();
  }

  void* stack_bottom() const {
#if defined(__x86_64__)
    return mapping_ + kGuard;
#else
    return stack_.get();
#endif
  }

  struct SchedulerTag {};
  explicit Fiber(SchedulerTag) {}  // the scheduler's own context: no stack of its own

 private:
#if defined(__x86_64__)
  static constexpr std::size_t kGuard = 4096;
  char* mapping_ = nullptr;
  void* sp_ = nullptr;
#else
  std::unique_ptr<char[]> stack_;
  ucontext_t context_{};
#endif
};

// ---------------------------------------------------------------------------------------------------------
// Threads, warps and the CTA scheduler
// ---------------------------------------------------------------------------------------------------------
enum class SyncKind : int { none, shfl, shfl_xor, ballot, any, all, syncwarp, reduce_max };

inline const char* name_of(SyncKind kind) {
  switch (kind) {
    case SyncKind::shfl: return "__shfl_sync";
    case SyncKind::shfl_xor: return "__shfl_xor_sync";
    case SyncKind::ballot: return "__ballot_sync";
    case SyncKind::any: return "__any_sync";
    case SyncKind::all: return "__all_sync";
    case SyncKind::syncwarp: return "__syncwarp";
    case SyncKind::reduce_max: return "__reduce_max_sync";
    default: return "(none)";
  }
}

enum class ThreadState { ready, warp_sync, barrier, done };

struct Slot {  // what one lane deposits at a warp-synchronous call
  alignas(16) unsigned char bytes[32];
  int size = 0;
  SyncKind kind = SyncKind::none;
  int width = 32;
};

struct ThreadContext {
  uint3 thread_idx;
  int linear = 0;  // linear thread index in the CTA
  int lane = 0;
  int warp = 0;
  int parity = 0;  // which of the warp's two slot rows this lane deposits into next
  ThreadState state = ThreadState::ready;
  Fiber* fiber = nullptr;
};

struct Warp {
  Slot slots[2][32];
  int first_thread = 0;
  int size = 0;  // threads in this warp (the last warp of a CTA may be partial)
};

struct Worker {  // per OS thread: the CTA being run and its fibers
  uint3 block_idx, block_dim, grid_dim;
  std::vector<ThreadContext> threads;
  std::vector<Warp> warps;
  std::vector<std::unique_ptr<Fiber>> stacks;
  Fiber scheduler{Fiber::SchedulerTag{}};
  ThreadContext* current = nullptr;
  const std::function<void()>* body = nullptr;
};

inline Worker& worker() {
  static thread_local Worker w;
  return w;
}

inline ThreadContext& current_thread() {
  ThreadContext* t = worker().current;
  if (t == nullptr) Fiber::fail("a CUDA built-in was used outside a kernel launched by bfly::lockstep::launch");
  return *t;
}

inline void fiber_entry(void* arg) {
  auto* thread = static_cast<ThreadContext*>(arg);
  (*worker().body)();
  thread->state = ThreadState::done;
  thread->fiber->yield_to(worker().scheduler);
  Fiber::fail("a finished fiber was resumed");
}

// Checks, after a round, that the live lanes of a warp are all at the same warp-synchronous call.
inline void check_round(const Worker& w, const Warp& warp) {
  SyncKind kind = SyncKind::none;
  int width = 0, size = 0;
  bool any_sync = false, any_other = false;
  for (int i = 0; i < warp.size; ++i) {
    const ThreadContext& t = w.threads[warp.first_thread + i];
    if (t.state == ThreadState::warp_sync) {
      const Slot& s = warp.slots[t.parity][i];  // the row this lane deposited into
      if (!any_sync) { kind = s.kind; width = s.width; size = s.size; any_sync = true; }
      else if (s.kind != kind || s.width != width || s.size != size)
        Fiber::fail("CTA (" + std::to_string(w.block_idx.x) + ") warp " + std::to_string(warp.first_thread / 32) +
                    ": lanes met different warp-synchronous calls (" + name_of(kind) + " and " + name_of(s.kind) +
                    ")");
    } else {
      any_other = true;
    }
  }
  if (any_sync && any_other)
    Fiber::fail("CTA (" + std::to_string(w.block_idx.x) + ") warp " + std::to_string(warp.first_thread / 32) + ": " +
                name_of(kind) + " reached by some lanes while others finished or wait at __syncthreads");
}

inline void run_cta(const std::function<void()>& body, uint3 block_idx, uint3 block_dim, uint3 grid_dim) {
  Worker& w = worker();
  w.block_idx = block_idx;
  w.block_dim = block_dim;
  w.grid_dim = grid_dim;
  w.body = &body;
  const int n = static_cast<int>(block_dim.x * block_dim.y * block_dim.z);
  while (static_cast<int>(w.stacks.size()) < n) w.stacks.push_back(std::make_unique<Fiber>());
  w.threads.assign(static_cast<std::size_t>(n), ThreadContext{});
  w.warps.assign(static_cast<std::size_t>((n + 31) / 32), Warp{});
  for (int i = 0; i < n; ++i) {
    ThreadContext& t = w.threads[i];
    t.thread_idx = uint3(i % block_dim.x, (i / block_dim.x) % block_dim.y, i / (block_dim.x * block_dim.y));
    t.linear = i;
    t.lane = i % 32;
    t.warp = i / 32;
    t.fiber = w.stacks[i].get();
    t.fiber->reset(&fiber_entry, &t);
  }
  for (int k = 0; k < static_cast<int>(w.warps.size()); ++k) {
    w.warps[k].first_thread = 32 * k;
    w.warps[k].size = std::min(32, n - 32 * k);
  }
  int live = n;
  while (live > 0) {
    bool resumed = false;
    for (Warp& warp : w.warps) {
      bool warp_resumed = false;
      for (int i = 0; i < warp.size; ++i) {
        ThreadContext& t = w.threads[warp.first_thread + i];
        if (t.state != ThreadState::ready && t.state != ThreadState::warp_sync) continue;
        warp_resumed = true;
        t.state = ThreadState::ready;
        w.current = &t;
        t.fiber->resume(w.scheduler);
        w.current = nullptr;
        resumed = true;
        if (t.state == ThreadState::done) --live;
      }
      if (warp_resumed) check_round(w, warp);
    }
    if (!resumed && live > 0) {  // every live thread waits at __syncthreads: release them
      for (ThreadContext& t : w.threads)
        if (t.state == ThreadState::barrier) t.state = ThreadState::ready;
    }
  }
}

// Deposits this lane's value at a warp-synchronous call, waits for the round, and returns the slot row.
inline Slot* arrive(SyncKind kind, const void* value, int size, int width) {
  ThreadContext& t = current_thread();
  Worker& w = worker();
  Warp& warp = w.warps[t.warp];
  const int parity = t.parity;
  Slot& slot = warp.slots[parity][t.lane];
  if (size > static_cast<int>(sizeof(slot.bytes))) Fiber::fail("shuffled type too large for the emulation");
  if (size > 0) std::memcpy(slot.bytes, value, static_cast<std::size_t>(size));
  slot.size = size;
  slot.kind = kind;
  slot.width = width;
  t.state = ThreadState::warp_sync;
  t.fiber->yield_to(w.scheduler);
  t.parity = parity ^ 1;
  return warp.slots[parity];
}

inline void check_width(int width) {
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
    Fiber::fail("shuffle width " + std::to_string(width) + " is not a power of two in [1, 32]");
}

inline void check_lane_exists(int source) {
  const ThreadContext& t = current_thread();
  if (source >= worker().warps[t.warp].size) Fiber::fail("shuffle reads lane " + std::to_string(source) +
                                                         " that does not exist in this (partial) warp");
}

// The worker threads of launch(): BFLY_LOCKSTEP_THREADS, else the number of CPU cores (bfly/jit/environment.hpp).
inline long long default_workers() { return static_cast<long long>(bfly::rt::environment().lockstep_threads); }

// Runs work(0) .. work(workers - 1) on as many OS threads, each with 8 MiB of stack beside the static TLS.
inline void run_on_workers(long long workers, const std::function<void(long long)>& work) {
  // 8 MiB beside the static TLS, which glibc takes out of a thread's stack (bfly/cpu/thread_stacks.hpp).
  static const std::size_t stack_bytes = (std::size_t(8) << 20) + bfly::cpu::static_tls_bytes();
  struct Job {
    const std::function<void(long long)>* work;
    long long index;
  };
  std::vector<Job> jobs(static_cast<std::size_t>(workers));
  std::vector<pthread_t> threads;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, stack_bytes);
  int error = 0;
  for (long long k = 0; k < workers && error == 0; ++k) {
    jobs[static_cast<std::size_t>(k)] = Job{&work, k};
    pthread_t thread;
    error = pthread_create(
        &thread, &attributes,
        [](void* job) -> void* {
          (*static_cast<Job*>(job)->work)(static_cast<Job*>(job)->index);
          return nullptr;
        },
        &jobs[static_cast<std::size_t>(k)]);
    if (error == 0) threads.push_back(thread);
  }
  pthread_attr_destroy(&attributes);
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  if (error != 0)
    Fiber::fail("cannot start a worker thread with " + std::to_string(stack_bytes >> 20) + " MiB of stack (" +
                std::strerror(error) + "); set BFLY_LOCKSTEP_THREADS=1 to run on the calling thread");
}

// Runs kernel(args...) for every thread of every CTA of `grid`, CTAs spread over `workers` OS threads (at most
// one per CTA, at least one). The outputs do not depend on `workers`.
template <typename... Params, typename... Args>
void launch_on(long long workers, void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
  const std::function<void()> body = [&]() { kernel(static_cast<Params>(args)...); };
  const long long ctas = static_cast<long long>(grid.x) * grid.y * grid.z;
  const auto run_range = [&](long long first, long long step) {
    for (long long c = first; c < ctas; c += step) {
      const uint3 idx(static_cast<unsigned>(c % grid.x), static_cast<unsigned>((c / grid.x) % grid.y),
                      static_cast<unsigned>(c / (static_cast<long long>(grid.x) * grid.y)));
      run_cta(body, idx, block, grid);
    }
  };
  workers = std::max(1ll, std::min(workers, ctas));
  if (workers == 1) {
    run_range(0, 1);
    return;
  }
  run_on_workers(workers, [&](long long k) { run_range(k, workers); });
}

// launch_on(default_workers(), ...): the CTAs spread over the CPU's cores.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
  launch_on(default_workers(), kernel, grid, block, std::forward<Args>(args)...);
}

}  // namespace bfly::lockstep

// ---------------------------------------------------------------------------------------------------------
// Built-in variables and intrinsics
// ---------------------------------------------------------------------------------------------------------
#define threadIdx (::bfly::lockstep::current_thread().thread_idx)
#define blockIdx (::bfly::lockstep::worker().block_idx)
#define blockDim (::bfly::lockstep::worker().block_dim)
#define gridDim (::bfly::lockstep::worker().grid_dim)
#define warpSize 32

template <typename T>
inline T __shfl_sync(unsigned int /*mask*/, T value, int source_lane, int width = 32) {
  using namespace bfly::lockstep;
  check_width(width);
  const int lane = current_thread().lane;
  Slot* row = arrive(SyncKind::shfl, &value, sizeof(T), width);
  const int source = (lane & ~(width - 1)) + (source_lane & (width - 1));
  check_lane_exists(source);
  T out;
  std::memcpy(&out, row[source].bytes, sizeof(T));
  return out;
}

template <typename T>
inline T __shfl_xor_sync(unsigned int /*mask*/, T value, int lane_mask, int width = 32) {
  using namespace bfly::lockstep;
  check_width(width);
  const int lane = current_thread().lane;
  Slot* row = arrive(SyncKind::shfl_xor, &value, sizeof(T), width);
  int source = lane ^ lane_mask;
  if (source >= ((lane + width) & ~(width - 1))) source = lane;  // outside the segment: own value (as CUDA)
  check_lane_exists(source);
  T out;
  std::memcpy(&out, row[source].bytes, sizeof(T));
  return out;
}

// The maximum over the lanes of `mask`, which must be one aligned segment of 1, 2, 4, 8, 16 or 32 lanes holding
// the calling lane (as the generated kernels use it: the W lanes of a group).
inline int __reduce_max_sync(unsigned int mask, int value) {
  using namespace bfly::lockstep;
  const int lane = current_thread().lane;
  const int width = __builtin_popcount(mask);
  check_width(width);
  const int first = lane & ~(width - 1);
  const unsigned int segment = width == 32 ? 0xffffffffu : ((1u << width) - 1u) << first;
  if (mask != segment)
    Fiber::fail("__reduce_max_sync: mask " + std::to_string(mask) + " of lane " + std::to_string(lane) +
                " is not the aligned segment of " + std::to_string(width) + " lanes that holds it");
  Slot* row = arrive(SyncKind::reduce_max, &value, sizeof(int), width);
  int out = value;
  for (int source = first; source < first + width; ++source) {
    check_lane_exists(source);
    int v;
    std::memcpy(&v, row[source].bytes, sizeof(int));
    out = std::max(out, v);
  }
  return out;
}

inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  using namespace bfly::lockstep;
  const int p = predicate != 0;
  const int warp_size = worker().warps[current_thread().warp].size;
  Slot* row = arrive(SyncKind::ballot, &p, sizeof(int), 32);
  unsigned int bits = 0;
  for (int i = 0; i < warp_size; ++i) {
    int v;
    std::memcpy(&v, row[i].bytes, sizeof(int));
    if (v) bits |= 1u << i;
  }
  return bits & mask;
}

inline int __any_sync(unsigned int mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned int mask, int predicate) {
  using namespace bfly::lockstep;
  const int warp_size = worker().warps[current_thread().warp].size;
  const unsigned int present = warp_size == 32 ? 0xffffffffu : ((1u << warp_size) - 1u);
  return (__ballot_sync(mask, predicate) & mask & present) == (mask & present);
}

inline void __syncwarp(unsigned int /*mask*/ = 0xffffffffu) {
  bfly::lockstep::arrive(bfly::lockstep::SyncKind::syncwarp, nullptr, 0, 32);
}

inline void __syncthreads() {
  using namespace bfly::lockstep;
  ThreadContext& t = current_thread();
  t.state = ThreadState::barrier;
  t.fiber->yield_to(worker().scheduler);
}

// CTAs run on several OS threads: a device-wide fence is a sequentially consistent fence (the sample_split kernel
// publishes its part totals with it before it counts its CTA in).
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// A trap ends the whole run, as it ends the CUDA context on a GPU (where the launch returns an error).
[[noreturn]] inline void __trap() {
  using namespace bfly::lockstep;
  const Worker& w = worker();
  Fiber::fail("__trap() in CTA (" + std::to_string(w.block_idx.x) + ", " + std::to_string(w.block_idx.y) + ", " +
              std::to_string(w.block_idx.z) + ") of a launch with blockDim (" + std::to_string(w.block_dim.x) + ", " +
              std::to_string(w.block_dim.y) + ", " + std::to_string(w.block_dim.z) + ") and gridDim (" +
              std::to_string(w.grid_dim.x) + ", " + std::to_string(w.grid_dim.y) + ", " +
              std::to_string(w.grid_dim.z) + "): the kernel refused its launch (a bfly kernel traps when launched "
              "with another block size or too small a grid)");
}

inline unsigned int __float_as_uint(float x) { unsigned int u; std::memcpy(&u, &x, 4); return u; }
inline float __uint_as_float(unsigned int u) { float x; std::memcpy(&x, &u, 4); return x; }
inline long long __double_as_longlong(double x) { long long u; std::memcpy(&u, &x, 8); return u; }
inline double __longlong_as_double(long long u) { double x; std::memcpy(&x, &u, 8); return x; }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
template <typename T> inline T __ldg(const T* p) { return *p; }

inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) {
  return std::atomic_ref<unsigned long long>(*address).fetch_add(value);
}
inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  std::atomic_ref<unsigned long long> ref(*address);
  unsigned long long old = ref.load();
  while (value < old && !ref.compare_exchange_weak(old, value)) {}
  return old;
}
inline int atomicAdd(int* address, int value) { return std::atomic_ref<int>(*address).fetch_add(value); }
inline float __fmul_rn(float x, float y) { return x * y; }
inline double __dmul_rn(double x, double y) { return x * y; }
