// Run-time CPU feature checks for the SIMD paths (the features component's kernels, the dedup
// verifier's shingle hashing): compiled per instruction set and chosen once, at first use; and
// the CPUs a process may use, for the default thread counts.
#pragma once

#include <sched.h>

#include <thread>

namespace simdup::detail {

/// The CPUs this process may run on: its affinity mask (taskset, a container's cpuset), at
/// least 1. std::thread::hardware_concurrency() counts the machine's, so threads beyond the
/// mask only take turns (and oneTBB warns that it cannot start them).
inline unsigned available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  const unsigned machine = std::thread::hardware_concurrency();
  return machine == 0 ? 1 : machine;
}

#if defined(__x86_64__)
inline bool cpu_has_avx2() noexcept {
  return __builtin_cpu_supports("avx2");
}

/// AVX-512 with the VL and DQ extensions (256-bit vectors, 64-bit multiply).
inline bool cpu_has_avx512vl_dq() noexcept {
  return __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// AVX-512 foundation with DQ (512-bit vectors, 64-bit multiply).
inline bool cpu_has_avx512f_dq() noexcept {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

}  // namespace simdup::detail
