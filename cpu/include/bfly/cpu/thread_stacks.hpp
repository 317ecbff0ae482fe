// Thread stacks in a process that runs CPU-compiled kernels (bfly/lockstep.hpp): every `__shared__` array of every
// kernel compiled for the CPU is a thread_local, so a binary that links hundreds of kernels (the test binaries)
// carries megabytes of static TLS, and glibc carves a thread's static TLS out of the thread's stack.
#pragma once

#include <link.h>  // dl_iterate_phdr
#include <pthread.h>

#include <cstddef>

namespace bfly::cpu {

// The static thread-local storage of the process, in bytes.
inline std::size_t static_tls_bytes() {
  std::size_t total = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* sum) {
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS)
            *static_cast<std::size_t*>(sum) += info->dlpi_phdr[i].p_memsz + info->dlpi_phdr[i].p_align;
        return 0;
      },
      &total);
  return total;
}

// Gives every thread started from now on with the default attributes the default stack plus the static TLS. Other
// libraries start such threads: in the GPU test binary (11 MB of static TLS against an 8 MiB default stack) NCCL's
// bootstrap thread started with no stack left and crashed at its first call, unless an earlier test had left a
// larger stack in glibc's cache (bench/RESULTS.md, "GPU tests"). Returns whether the default was set.
inline bool reserve_stack_for_static_tls() {
  pthread_attr_t attributes;
  if (pthread_getattr_default_np(&attributes) != 0) return false;
  std::size_t stack_bytes = 0;
  const bool set = pthread_attr_getstacksize(&attributes, &stack_bytes) == 0 &&
                   pthread_attr_setstacksize(&attributes, stack_bytes + static_tls_bytes()) == 0 &&
                   pthread_setattr_default_np(&attributes) == 0;
  pthread_attr_destroy(&attributes);
  return set;
}

}  // namespace bfly::cpu
