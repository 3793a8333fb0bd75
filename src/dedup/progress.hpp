// Progress of a long run on stderr: a redrawn bar on a terminal (documents, MB/s, ETA), plain
// lines every few seconds otherwise (logs), nothing with --quiet.
#pragma once

#include <simdup/dedup_job.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace simdup::detail {

class progress_meter {
 public:
  /// `total_bytes`: compressed input size when known (regular files), else 0 (no ETA).
  progress_meter(progress_style style, std::FILE* out, uint64_t total_bytes);
  /// Cheap to call often: prints only when the interval has passed, or at once when the phase
  /// changed in a run that has lasted an interval (short runs stay quiet). `spilled_bytes`: what
  /// the run wrote under --tmp-dir so far (shown when not 0).
  void update(std::string_view phase, uint64_t documents, uint64_t bytes, uint64_t input_bytes,
              uint64_t spilled_bytes = 0);
  /// Clears the bar (terminal) so the summary starts on a clean line.
  void finish();

 private:
  progress_style style_;
  std::FILE* out_;
  uint64_t total_bytes_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
  std::string phase_;  // of the last update
};

}  // namespace simdup::detail
