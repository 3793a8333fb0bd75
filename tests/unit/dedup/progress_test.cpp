// progress_meter: a redraw only after its interval (200 ms for the bar), a phase change shown at
// once in a run that has lasted an interval, the bytes spilled when there are any, and nothing
// for a run shorter than an interval.
#include "dedup/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace simdup::detail {
namespace {

// What the meter wrote so far.
std::string meter_output(std::FILE* f) {
  std::fflush(f);
  std::string out(static_cast<std::size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  std::fseek(f, 0, SEEK_END);
  return out;
}

TEST(ProgressMeter, PhasesShowAtOnceAfterTheFirstInterval) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  progress_meter m(progress_style::bar, f, 0);
  m.update("reading", 10, 1000, 0);
  EXPECT_EQ(meter_output(f), "");  // within the first interval
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  m.update("reading", 20, 2000, 0, 1'500'000);
  std::string out = meter_output(f);
  EXPECT_NE(out.find("reading"), std::string::npos) << out;
  EXPECT_NE(out.find("20 docs"), std::string::npos) << out;
  EXPECT_NE(out.find("1.5 MB spilled"), std::string::npos) << out;
  m.update("all pairs", 20, 2000, 0, 1'500'000);  // a new phase: at once
  out = meter_output(f);
  EXPECT_NE(out.find("all pairs"), std::string::npos) << out;
  m.update("all pairs", 20, 2000, 0, 1'500'000);  // the same phase: waits for the interval
  EXPECT_EQ(meter_output(f), out);
  std::fclose(f);
}

TEST(ProgressMeter, ARunShorterThanAnIntervalStaysQuiet) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  progress_meter m(progress_style::lines, f, 0);
  m.update("reading", 10, 1000, 0, 0);
  m.update("all pairs", 10, 1000, 0, 4096);
  m.update("clusters", 10, 1000, 0, 4096);
  m.finish();
  EXPECT_EQ(meter_output(f), "");
  std::fclose(f);
}

// A clock the test moves.
struct test_clock {
  std::chrono::steady_clock::time_point at{};
  void advance(double seconds) {
    at += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds));
  }
};

TEST(ProgressMeter, ASecondPassHasItsOwnRateAndEta) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  test_clock clock;
  progress_meter m(progress_style::lines, f, 1'000'000'000, [&] { return clock.at; });
  // Reading: 1 GB in 100 s. A phase counts from its first update.
  m.update("reading", 0, 0, 0);
  clock.advance(50);
  m.update("reading", 500, 500'000'000, 500'000'000);
  std::string out = meter_output(f);
  EXPECT_NE(out.find("reading: 500 documents, 500.0 MB, 10.0 MB/s,  50%, ETA 50 s"),
            std::string::npos)
      << out;
  clock.advance(50);
  m.update("clusters", 1000, 1'000'000'000, 1'000'000'000);  // bytes stand still: no ETA
  out = meter_output(f);
  EXPECT_NE(out.find("clusters: 1000 documents, 1000.0 MB, 10.0 MB/s\n"), std::string::npos) << out;
  // Writing reads the input again from 0, ten times as fast: 6 s for 60 %.
  clock.advance(20);
  m.update("writing", 0, 0, 0);  // a new pass: no rate yet
  EXPECT_NE(meter_output(f).find("writing: 0 documents, 0.0 MB\n"), std::string::npos)
      << meter_output(f);
  clock.advance(6);
  m.update("writing", 600, 600'000'000, 600'000'000);
  out = meter_output(f);
  EXPECT_NE(out.find("writing: 600 documents, 600.0 MB, 100.0 MB/s,  60%, ETA 4 s"),
            std::string::npos)
      << out;
  std::fclose(f);
}

}  // namespace
}  // namespace simdup::detail
