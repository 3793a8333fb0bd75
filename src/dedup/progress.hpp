// Progress of a long run on stderr: a redrawn bar on a terminal (documents, MB/s, ETA), plain
// lines every few seconds otherwise (logs), nothing with --quiet.
#pragma once

#include <simdup/dedup_job.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace simdup::detail {

class progress_meter {
 public:
  using clock_type = std::chrono::steady_clock;
  /// `total_bytes`: compressed input size when known (regular files), else 0 (no ETA). `now`:
  /// the clock (tests give their own).
  progress_meter(progress_style style, std::FILE* out, uint64_t total_bytes,
                 std::function<clock_type::time_point()> now = clock_type::now);
  /// Cheap to call often: prints only when the interval has passed, or at once when the phase
  /// changed in a run that has lasted an interval (short runs stay quiet). `spilled_bytes`: what
  /// the run wrote under --tmp-dir so far (shown when not 0). The rate and the ETA are the
  /// phase's own (a second pass over the input starts from 0 bytes at its own time); a phase
  /// whose bytes do not move (the near layer) shows the run's average rate and no ETA.
  void update(std::string_view phase, uint64_t documents, uint64_t bytes, uint64_t input_bytes,
              uint64_t spilled_bytes = 0);
  /// Clears the bar (terminal) so the summary starts on a clean line.
  void finish();

 private:
  progress_style style_;
  std::FILE* out_;
  uint64_t total_bytes_;
  std::function<clock_type::time_point()> now_;
  clock_type::time_point start_;
  clock_type::time_point last_;
  // Where the current phase began: its time and the byte counts then.
  clock_type::time_point phase_start_;
  uint64_t phase_bytes_ = 0;
  uint64_t phase_input_bytes_ = 0;
  uint64_t most_bytes_ = 0;  // the most bytes any update gave: below it, a pass begins again
  bool drawn_ = false;
  std::string phase_;  // of the last update
};

}  // namespace simdup::detail
