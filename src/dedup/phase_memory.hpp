// The peak resident set of each phase of a job. The process's own peak (VmHWM) is exact for a
// phase that raised it; a phase that stayed below an earlier one's peak gets the highest RSS a
// sampling thread saw in it (every 20 ms). The peak is never reset, so the process's peak as
// getrusage and wait4 report it stays true.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace simdup::detail {

class phase_memory {
 public:
  phase_memory();
  ~phase_memory();
  phase_memory(const phase_memory&) = delete;
  phase_memory& operator=(const phase_memory&) = delete;

  /// The peak RSS of the phase since the previous call (or construction), in bytes; the next
  /// phase starts now. 0 where /proc/self is not readable.
  uint64_t end_phase();
  /// The process's peak RSS so far (VmHWM), bytes.
  static uint64_t process_peak();
  /// The process's RSS now, bytes; 0 where /proc/self is not readable.
  static uint64_t resident_bytes();

 private:
  void sample();

  uint64_t peak_at_start_ = 0;
  std::atomic<uint64_t> sampled_{0};  // highest RSS sampled in the current phase
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread sampler_;
};

}  // namespace simdup::detail
