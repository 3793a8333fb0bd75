// Time and memory readings shared by the end-to-end harnesses. On a shared machine wall time
// misleads, so the harnesses print CPU time beside it; memory comes from the kernel's own
// accounting (getrusage, /proc/self/status), not from allocator estimates.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

namespace simdup::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// User + system CPU seconds of the whole process (all threads).
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// CPU seconds of the calling thread: the one-core speed, whatever else runs on the machine.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// A "VmRSS:" or "VmHWM:" line of /proc/self/status, in bytes; 0 when absent.
inline double status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0)
      return std::strtod(line.c_str() + std::strlen(key), nullptr) * 1024;
  }
  return 0;
}

/// Peak resident set size of the process so far, in bytes: /proc's high-water mark.
/// getrusage's ru_maxrss only stands in without /proc, since it keeps the peak of the process
/// image before execve (a harness started from a large Python script would report the script's).
inline double peak_rss_bytes() {
  if (const double hwm = status_bytes("VmHWM:"); hwm > 0) return hwm;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024;
}

/// Resets the peak RSS (VmHWM) of this process to its current RSS (Linux >= 4.0), so that a
/// later status_bytes("VmHWM:") covers only what ran since.
inline void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

}  // namespace simdup::bench
