#include "dedup/phase_memory.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <unistd.h>

namespace simdup::detail {
namespace {

// A "Name: N kB" line of /proc/self/status, in bytes; 0 when absent.
uint64_t status_bytes(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  char format[64];
  std::snprintf(format, sizeof format, "%s: %%llu kB", name);
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, format, &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

// The current RSS from /proc/self/statm (its second field, in pages): cheaper than status.
uint64_t current_rss() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace

phase_memory::phase_memory() : peak_at_start_(process_peak()) {
  sampler_ = std::thread([this] { sample(); });
}

phase_memory::~phase_memory() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  sampler_.join();
}

uint64_t phase_memory::process_peak() {
  return status_bytes("VmHWM");
}

uint64_t phase_memory::resident_bytes() {
  return current_rss();
}

void phase_memory::sample() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(20), [this] { return stop_; })) {
    const uint64_t rss = current_rss();
    uint64_t seen = sampled_.load(std::memory_order_relaxed);
    while (rss > seen && !sampled_.compare_exchange_weak(seen, rss, std::memory_order_relaxed)) {
    }
  }
}

uint64_t phase_memory::end_phase() {
  const uint64_t peak = process_peak();
  const uint64_t now = current_rss();
  uint64_t phase = sampled_.exchange(now, std::memory_order_relaxed);
  phase = std::max(phase, now);
  // A phase that raised the process's peak reached it.
  if (peak > peak_at_start_) phase = std::max(phase, peak);
  peak_at_start_ = peak;
  // The kernel's RSS counters are per-CPU and summed approximately, so a sample may read a
  // little above the high-water mark; no phase can have held more than the process's peak.
  return peak ? std::min(phase, peak) : phase;
}

}  // namespace simdup::detail
