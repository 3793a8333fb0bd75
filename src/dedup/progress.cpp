#include "dedup/progress.hpp"

#include <unistd.h>

namespace simdup::detail {

progress_meter::progress_meter(progress_style style, std::FILE* out, uint64_t total_bytes,
                               std::function<clock_type::time_point()> now)
    : style_(style), out_(out), total_bytes_(total_bytes), now_(std::move(now)) {
  if (style_ == progress_style::automatic) {
    style_ = out_ && isatty(fileno(out_)) ? progress_style::bar : progress_style::lines;
  }
  if (!out_) style_ = progress_style::none;
  start_ = last_ = phase_start_ = now_();
}

void progress_meter::update(std::string_view phase, uint64_t documents, uint64_t bytes,
                            uint64_t input_bytes, uint64_t spilled_bytes) {
  if (style_ == progress_style::none) return;
  const auto now = now_();
  const auto interval = style_ == progress_style::bar ? std::chrono::milliseconds(200)
                                                      : std::chrono::milliseconds(5000);
  const bool new_phase = phase != phase_;
  if (new_phase) {
    phase_ = phase;
    phase_start_ = now;
    phase_bytes_ = bytes;
    phase_input_bytes_ = input_bytes;
  }
  if (now - last_ < interval && !(new_phase && now - start_ >= interval)) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double in_phase = std::chrono::duration<double>(now - phase_start_).count();
  // The phase's own rate while its bytes move (a second pass starts again from 0); the run's
  // average in a phase after reading whose bytes stand still; none at the start of a pass.
  const bool moving = bytes > phase_bytes_ && in_phase > 0;
  most_bytes_ = std::max(most_bytes_, bytes);
  char rate[40] = "";
  if (moving) {
    std::snprintf(rate, sizeof rate, ", %.1f MB/s",
                  static_cast<double>(bytes - phase_bytes_) / 1e6 / in_phase);
  } else if (bytes == most_bytes_ && seconds > 0) {
    std::snprintf(rate, sizeof rate, ", %.1f MB/s", static_cast<double>(bytes) / 1e6 / seconds);
  }
  char spilled[40] = "";
  if (spilled_bytes > 0) {
    std::snprintf(spilled, sizeof spilled, ", %.1f MB spilled",
                  static_cast<double>(spilled_bytes) / 1e6);
  }
  char eta[48] = "";
  if (total_bytes_ > 0 && input_bytes > phase_input_bytes_ && input_bytes <= total_bytes_ &&
      in_phase > 0) {
    const double rest = in_phase * static_cast<double>(total_bytes_ - input_bytes) /
                        static_cast<double>(input_bytes - phase_input_bytes_);
    std::snprintf(eta, sizeof eta, ", %3.0f%%, ETA %.0f s",
                  100.0 * static_cast<double>(input_bytes) / static_cast<double>(total_bytes_),
                  rest);
  }
  if (style_ == progress_style::bar) {
    constexpr int width = 24;
    const int filled = total_bytes_ > 0 && input_bytes <= total_bytes_
                           ? static_cast<int>(width * static_cast<double>(input_bytes) /
                                              static_cast<double>(total_bytes_))
                           : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, total_bytes_ > 0 ? '.' : ' ');
    std::fprintf(out_, "\r\x1b[2K%.*s [%s] %llu docs%s%s%s", static_cast<int>(phase.size()),
                 phase.data(), bar.c_str(), static_cast<unsigned long long>(documents), rate,
                 spilled, eta);
    drawn_ = true;
  } else {
    std::fprintf(out_, "simdup dedup: %.*s: %llu documents, %.1f MB%s%s%s\n",
                 static_cast<int>(phase.size()), phase.data(),
                 static_cast<unsigned long long>(documents), static_cast<double>(bytes) / 1e6, rate,
                 spilled, eta);
  }
  std::fflush(out_);
}

void progress_meter::finish() {
  if (drawn_) std::fprintf(out_, "\r\x1b[2K");
  drawn_ = false;
}

}  // namespace simdup::detail
