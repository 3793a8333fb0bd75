// The planner: estimates each candidate layout's memory and time and picks the cheapest that
// fits the budget. The constants are rough costs on one core of a current x86 server, measured
// with bench/ (docs/tuning.md); only their ratios matter.
#include <simdup/plan.hpp>

#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "index/online_layout.hpp"
#include "index/tables.hpp"

namespace simdup {
namespace {

constexpr double batch_sort_ns = 8;     // radix passes + scan, per fingerprint per table
constexpr double batch_check_ns = 1;    // popcount check of one candidate pair
constexpr double online_probe_ns = 40;  // directory + table lookups (cache misses) per table
constexpr double online_check_ns = 15;  // fetch and check one candidate entry
constexpr double batch_bytes = 8 + 12;  // input array + (key, ordinal) records of one table

/// Number of r-subsets of `widths` by their width sum: out[s] = how many choices sum to s bits.
/// A small DP, so the planner can weigh layouts with thousands of tables without building them.
std::vector<double> choice_sums(const std::vector<int>& widths, int r) {
  // dp[c][s]: ways to choose c blocks among those seen so far with width sum s.
  std::vector<std::vector<double>> dp(static_cast<std::size_t>(r) + 1, std::vector<double>(65, 0));
  dp[0][0] = 1;
  for (int w : widths)
    for (int c = r; c >= 1; --c)
      for (int s = 64; s >= w; --s)
        dp[static_cast<std::size_t>(c)][static_cast<std::size_t>(s)] +=
            dp[static_cast<std::size_t>(c - 1)][static_cast<std::size_t>(s - w)];
  return dp[static_cast<std::size_t>(r)];
}

/// Number of tables per prefix length (index = bits) of a valid layout.
std::vector<double> prefix_histogram(const index_layout& layout) {
  const int m1 = static_cast<int>(layout.widths.size());
  const std::vector<double> level1 = choice_sums(layout.widths, m1 - layout.k);
  if (layout.second_level_blocks == 0) return level1;
  std::vector<double> out(65, 0);
  const int m2 = layout.second_level_blocks;
  for (int p1 = 0; p1 <= 64; ++p1) {
    if (level1[static_cast<std::size_t>(p1)] == 0) continue;
    const auto level2 = choice_sums(detail::even_widths(64 - p1, m2), m2 - layout.k);
    for (int p2 = 0; p1 + p2 <= 64; ++p2)
      out[static_cast<std::size_t>(p1 + p2)] +=
          level1[static_cast<std::size_t>(p1)] * level2[static_cast<std::size_t>(p2)];
  }
  return out;
}

}  // namespace

result<index_plan> evaluate_layout(const index_layout& layout, uint64_t n, plan_purpose purpose) {
  if (status s = layout.validate(); !s) return s.error();
  const std::vector<double> hist = prefix_histogram(layout);
  index_plan p;
  p.layout = layout;
  p.purpose = purpose;
  p.n = n;
  p.tables = layout.table_count();
  p.min_prefix_bits = 64;
  const double dn = static_cast<double>(n);
  const int dir = detail::legacy_directory_bits(n, 64);
  double checks = 0;
  for (int bits = 0; bits <= 64; ++bits) {
    const double count = hist[static_cast<std::size_t>(bits)];
    if (count == 0) continue;
    p.min_prefix_bits = std::min(p.min_prefix_bits, bits);
    p.max_prefix_bits = std::max(p.max_prefix_bits, bits);
    p.candidates_per_probe += count * std::ldexp(dn, -bits);
    checks += count * std::ldexp(dn, -std::min(bits, dir));
  }
  const double nt = static_cast<double>(p.tables);
  if (purpose == plan_purpose::batch) {
    p.bytes_per_entry = batch_bytes;
    p.cost = nt * batch_sort_ns + p.candidates_per_probe * 0.5 * batch_check_ns;
  } else {
    p.bytes_per_entry = detail::online_bytes_per_entry(n, p.tables, p.min_prefix_bits);
    p.cost = nt * online_probe_ns + checks * online_check_ns;
  }
  return p;
}

result<index_plan> make_plan(const plan_request& request) {
  const int k = request.k;
  if (status s = validate_k(k); !s) return s.error();
  std::vector<index_layout> layouts;
  for (int m = k + 1; m <= std::min(64, k + 24); ++m) {
    layouts.push_back(index_layout::even(k, m));
    if (layouts.back().table_count() > 1024) break;  // more tables never pay off
  }
  for (int m1 = k + 1; m1 <= std::min(64, k + 8); ++m1)
    for (int m2 = k + 1; m2 <= k + 8; ++m2) layouts.push_back(index_layout::two_level(k, m1, m2));

  bool have = false, seen = false;
  index_plan best;
  double smallest = 0;  // bytes per entry of the leanest valid layout, for the error
  for (const index_layout& l : layouts) {
    if (!l.validate()) continue;
    auto p = evaluate_layout(l, request.n, request.purpose);
    if (!p) continue;
    const double bytes = p->bytes_per_entry * static_cast<double>(request.n);
    if (!seen || p->bytes_per_entry < smallest) smallest = p->bytes_per_entry;
    seen = true;
    if (request.memory != 0 && bytes > static_cast<double>(request.memory)) continue;
    // Cheaper wins; on a near tie (2%) fewer tables win (less memory, simpler).
    if (!have || p->cost < best.cost * 0.98 ||
        (p->cost <= best.cost * 1.02 && p->tables < best.tables)) {
      best = std::move(*p);
      have = true;
    }
  }
  if (!have) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "no layout for k=%d fits %llu bytes for %llu fingerprints (the smallest needs "
                  "about %.0f bytes each)",
                  k, static_cast<unsigned long long>(request.memory),
                  static_cast<unsigned long long>(request.n), smallest);
    return make_error(errc::too_large, buf);
  }
  return best;
}

std::string index_plan::describe() const {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "purpose: %s\n"
      "fingerprints: %llu\n"
      "k: %d\n"
      "blocks: %s (%zu level-1 blocks%s)\n"
      "tables: %zu\n"
      "prefix bits: %d..%d\n"
      "candidates per probe: %.3g\n"
      "bytes per fingerprint: %.1f\n"
      "total memory: %.1f MB\n",
      purpose == plan_purpose::batch ? "batch" : "online", static_cast<unsigned long long>(n),
      layout.k, layout.describe().c_str(), layout.widths.size(),
      layout.second_level_blocks
          ? (", " + std::to_string(layout.second_level_blocks) + " level-2 blocks").c_str()
          : "",
      tables, min_prefix_bits, max_prefix_bits, candidates_per_probe, bytes_per_entry,
      bytes_per_entry * static_cast<double>(n) / 1e6);
  return buf;
}

}  // namespace simdup
