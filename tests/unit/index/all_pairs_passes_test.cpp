// all_pairs under a memory limit: the passes over a scan report exactly the pairs of the
// in-memory run, on every layout; an impossible limit is refused with the smallest limit that
// works; a scan's error and an input that changes between passes are errors.
#include <simdup/all_pairs.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace simdup {
namespace {

using pair_list = std::vector<std::tuple<uint32_t, uint32_t, int>>;

/// Reads `fps` in blocks of 1,000, counting how often it was read.
struct counted_scan {
  const std::vector<uint64_t>& fps;
  int reads = 0;

  fingerprint_scan scan() {
    return {fps.size(), [this](const auto& block) -> status {
              ++reads;
              for (std::size_t at = 0; at < fps.size(); at += 1000)
                block(std::span(fps).subspan(at, std::min<std::size_t>(1000, fps.size() - at)));
              return {};
            }};
  }
};

struct run_result {
  pair_list pairs;
  all_pairs_stats stats;
};

run_result collect(const fingerprint_scan& scan, const all_pairs_options& opt) {
  run_result out;
  auto r = all_pairs(scan, opt, [&](std::span<const index_pair> ps) {
    for (const auto& p : ps) out.pairs.emplace_back(p.a, p.b, p.distance);
    return true;
  });
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  if (r) out.stats = *r;
  std::sort(out.pairs.begin(), out.pairs.end());
  EXPECT_EQ(std::adjacent_find(out.pairs.begin(), out.pairs.end()), out.pairs.end())
      << "a pair reported twice";
  return out;
}

/// Random fingerprints, near copies (0..k+1 bits apart) and runs of exact copies.
std::vector<uint64_t> corpus(std::size_t n, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> fps(n);
  for (auto& f : fps) f = rng();
  for (std::size_t i = 0; i + 4 < n; i += 5) {
    uint64_t f = fps[i];
    const int d = static_cast<int>(i / 5 % static_cast<std::size_t>(k + 2));
    for (int b = 0; b < d; ++b) f ^= uint64_t{1} << ((i + 13 * b) % 64);
    fps[i + 1] = f;
    if (i % 50 == 0) fps[i + 2] = fps[i + 3] = fps[i];
  }
  return fps;
}

/// A limit that holds about `records` fingerprints per pass on one thread.
uint64_t limit_for(uint64_t records) {
  return all_pairs_pass_bytes(records, 1);
}

TEST(AllPairsPasses, SamePairsAsInMemoryOverLayoutsAndLimits) {
  struct cfg {
    int k;
    const char* blocks;
  };
  const cfg cfgs[] = {{3, "5"}, {3, "4"}, {3, "6"}, {3, "4/4"}, {2, "20,5,9,30"},
                      {1, "2"}, {0, "1"}, {4, "6"}, {6, "8/7"}};
  for (const cfg& c : cfgs) {
    const std::vector<uint64_t> fps = corpus(6000, c.k, 7 + c.k);
    auto layout = index_layout::parse(c.k, c.blocks);
    ASSERT_TRUE(layout.has_value());
    all_pairs_options opt;
    opt.layout = *layout;
    opt.threads = 1;
    counted_scan whole{fps};
    const run_result expected = collect(whole.scan(), opt);
    ASSERT_EQ(expected.stats.passes, 1u);
    EXPECT_EQ(whole.reads, 1);
    for (uint64_t records : {3000u, 1000u, 500u}) {
      SCOPED_TRACE(std::string("k=") + std::to_string(c.k) + " blocks=" + c.blocks +
                   " records/pass=" + std::to_string(records));
      opt.memory_limit = limit_for(records);
      counted_scan limited{fps};
      const run_result got = collect(limited.scan(), opt);
      EXPECT_EQ(got.pairs, expected.pairs);
      EXPECT_EQ(got.stats.candidates, expected.stats.candidates);
      EXPECT_GT(got.stats.passes, 1u);
      EXPECT_EQ(limited.reads, static_cast<int>(got.stats.passes) + 1);  // + the counting scan
      EXPECT_LE(got.stats.working_bytes, opt.memory_limit);
    }
  }
}

TEST(AllPairsPasses, SpanWithLimitTakesPassesAndThreads) {
  const std::vector<uint64_t> fps = corpus(250'000, 3, 11);
  all_pairs_options opt;
  opt.threads = 2;
  pair_list expected;
  ASSERT_TRUE(all_pairs(fps, opt, [&](std::span<const index_pair> ps) {
    for (const auto& p : ps) expected.emplace_back(p.a, p.b, p.distance);
    return true;
  }));
  std::sort(expected.begin(), expected.end());
  opt.memory_limit = all_pairs_pass_bytes(40'000, 2);
  pair_list got;
  auto r = all_pairs(fps, opt, [&](std::span<const index_pair> ps) {
    for (const auto& p : ps) got.emplace_back(p.a, p.b, p.distance);
    return true;
  });
  ASSERT_TRUE(r.has_value()) << r.error().message;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_GE(r->passes, 4u * 6);  // 4 table groups, at least 250,000 / 40,000 passes each
  EXPECT_LE(r->working_bytes, opt.memory_limit);
}

TEST(AllPairsPasses, ImpossibleLimitNamesTheSmallestThatWorks) {
  // 5,000 equal fingerprints can never be split: one pass must hold them all.
  std::vector<uint64_t> fps(5000, 0x0123456789abcdefull);
  fps.resize(6000, 1);
  all_pairs_options opt;
  opt.threads = 1;
  opt.memory_limit = limit_for(1000);
  counted_scan scan{fps};
  auto r = all_pairs(scan.scan(), opt, [](auto) { return true; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::too_large);
  EXPECT_TRUE(r.error().message.starts_with("memory_limit ")) << r.error().message;
  EXPECT_NE(r.error().message.find("5000 fingerprints share"), std::string::npos)
      << r.error().message;
  const std::string smallest = std::to_string((limit_for(5000) + (1 << 20) - 1) >> 20) + " MiB";
  EXPECT_NE(r.error().message.find("smallest limit for it is " + smallest), std::string::npos)
      << r.error().message;
  // And that limit works.
  opt.memory_limit = (limit_for(5000) + (1 << 20) - 1) >> 20 << 20;
  uint64_t pairs = 0;
  auto ok = all_pairs(scan.scan(), opt, [&](std::span<const index_pair> ps) {
    pairs += ps.size();
    return true;
  });
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(pairs, 5000ull * 4999 / 2 + 1000ull * 999 / 2);
}

TEST(AllPairsPasses, ScanErrorsAndChangedInputAreErrors) {
  const std::vector<uint64_t> fps = corpus(3000, 3, 5);
  all_pairs_options opt;
  opt.threads = 1;
  opt.memory_limit = limit_for(500);
  int reads = 0;
  const fingerprint_scan failing{fps.size(), [&](const auto& block) -> status {
                                   if (++reads == 3) return make_error(errc::io_error, "disk gone");
                                   block(std::span(fps));
                                   return {};
                                 }};
  auto r = all_pairs(failing, opt, [](auto) { return true; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::io_error);
  EXPECT_EQ(r.error().message, "disk gone");

  reads = 0;
  const fingerprint_scan shrinking{fps.size(), [&](const auto& block) -> status {
                                     block(std::span(fps).first(++reads == 1 ? fps.size() : 2000));
                                     return {};
                                   }};
  r = all_pairs(shrinking, opt, [](auto) { return true; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::invalid_input);
  EXPECT_NE(r.error().message.find("changed between passes"), std::string::npos);
}

TEST(AllPairsPasses, SinkCanStopBetweenPasses) {
  const std::vector<uint64_t> fps = corpus(6000, 3, 9);
  all_pairs_options opt;
  opt.threads = 1;
  opt.memory_limit = limit_for(500);
  int calls = 0;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  opt.on_pass = [&](uint64_t pass, uint64_t passes) { seen.emplace_back(pass, passes); };
  counted_scan scan{fps};
  auto r = all_pairs(scan.scan(), opt, [&](auto) { return ++calls, false; });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(calls, 1);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().first, 1u);
  EXPECT_LT(seen.size(), seen.front().second);  // stopped before the last pass
}

}  // namespace
}  // namespace simdup
