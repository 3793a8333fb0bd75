// Batch all-pairs (the batch pass itself is index/batch_run.hpp): in memory over a span, in
// passes over a scan under a memory limit, and the plain baseline.
//
// Passes: the tables fall into groups by their first block, and a pair reported by a table of
// a group shares that whole block. So one pass may take the records of one group whose lowest
// `sel` bits of the first block lie in a range of values, and run that group's tables alone:
// every pair is found in exactly one pass, whatever the ranges. One scan counts the values per
// group; `sel` is the fewest bits whose values pack into passes that fit the limit (more bits
// than needed would shrink the partition bits inside a pass and slow it down).
#include <simdup/all_pairs.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include "index/all_pairs_baseline.hpp"
#include "index/batch_run.hpp"
#include "index/pair_emitter.hpp"
#include "index/tables.hpp"
#include "util/cpu.hpp"
#include "util/describe_bytes.hpp"

namespace simdup {
namespace {

using detail::describe_bytes;

/// Bytes per record of a pass: its fingerprint (8) and ordinal (4), its 12-byte scatter record,
/// the per-thread bucket copies (12/8) and chain links (8 at most for the largest bucket,
/// about 1 on average).
constexpr uint64_t pass_bytes_per_record = 27;

/// Most selector bits counted by the first scan (4096 counters per group).
constexpr int max_selector_bits = 12;

result<index_plan> plan_for(std::size_t n, const all_pairs_options& options) {
  if (n > UINT32_MAX)
    return make_error(errc::too_large, "all_pairs handles at most 2^32 - 1 fingerprints");
  if (options.layout.widths.empty())
    return make_plan(
        {.n = n, .k = options.layout.k, .memory = options.memory, .purpose = plan_purpose::batch});
  return evaluate_layout(options.layout, n, plan_purpose::batch);
}

unsigned threads_for(std::size_t n, unsigned requested) {
  unsigned threads = requested ? requested : detail::available_cpus();
  // Small inputs: thread start-up costs more than it saves.
  if (n < 100'000) threads = 1;
  return std::max(1u, threads);
}

/// Tables sharing a first bit move (the run of fingerprint bits at the top of their keys).
/// The move may reach past the prefix (a table whose blocks keep their order is one move), so
/// the bits every table of the group matches on are its top `field_width` bits, at
/// `field_shift`.
struct table_group {
  int shift = 0;  ///< the move's lowest fingerprint bit
  int width = 0;  ///< the move's width
  int field_shift = 0;
  int field_width = 0;
};

std::vector<table_group> groups_of(const std::vector<detail::table_perm>& tables) {
  std::vector<table_group> groups;
  for (const detail::table_perm& t : tables) {
    const int shift = t.moves.front().src_shift, width = std::popcount(t.moves.front().mask);
    const int field = std::min(width, t.prefix_bits);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const table_group& g) {
      return g.shift == shift && g.width == width;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), {shift, width, 0, field});
    it->field_width = std::min(it->field_width, field);
    it->field_shift = shift + width - it->field_width;
  }
  return groups;
}

/// One pass: a group's records whose selector value lies in [lo, hi).
struct pass_plan {
  std::size_t group = 0;
  int sel = 0;
  uint32_t lo = 0, hi = 0;
  uint64_t records = 0;
};

/// Packs a group's values of the lowest `sel` bits (counts summed from the finest histogram) into
/// contiguous ranges of at most `capacity` records. False when one value alone is larger.
bool pack(const std::vector<uint64_t>& finest, int finest_bits, int sel, uint64_t capacity,
          std::size_t group, std::vector<pass_plan>& out) {
  const uint32_t values = uint32_t{1} << sel;
  pass_plan cur{group, sel, 0, 0, 0};
  for (uint32_t v = 0; v < values; ++v) {
    uint64_t count = 0;  // the finest values whose low `sel` bits are v
    for (uint32_t f = v; f < (uint32_t{1} << finest_bits); f += values) count += finest[f];
    if (count > capacity) return false;
    if (cur.records + count > capacity && cur.records > 0) {
      out.push_back(cur);
      cur = {group, sel, v, v, 0};
    }
    cur.hi = v + 1;
    cur.records += count;
  }
  if (cur.records > 0) out.push_back(cur);
  return true;
}

error_info changed_input(uint64_t expected, uint64_t read) {
  return make_error(errc::invalid_input, "the input changed between passes: expected " +
                                             std::to_string(expected) + " fingerprints, read " +
                                             std::to_string(read));
}

}  // namespace

uint64_t all_pairs_pass_bytes(uint64_t n, unsigned threads) {
  // Fixed: per thread a 2^18-slot table (1 MiB), the smallest bucket copy (768 KiB), the
  // sub-bucket counts (up to 2 MiB) and the pair batch; the scan's read window (4 MiB).
  const uint64_t t = std::max(1u, threads);
  return n * pass_bytes_per_record + t * (4 << 20) + (4 << 20);
}

result<all_pairs_stats> all_pairs(std::span<const uint64_t> fingerprints,
                                  const all_pairs_options& options, const pair_sink& sink) {
  const std::size_t n = fingerprints.size();
  if (options.memory_limit != 0 &&
      all_pairs_pass_bytes(n, threads_for(n, options.threads)) + options.memory_taken >
          options.memory_limit) {
    const fingerprint_scan scan{
        n, [fingerprints](const auto& block) -> status {
          for (std::size_t at = 0; at < fingerprints.size(); at += 1 << 16)
            block(
                fingerprints.subspan(at, std::min<std::size_t>(1 << 16, fingerprints.size() - at)));
          return {};
        }};
    return all_pairs(scan, options, sink);
  }
  auto plan = plan_for(n, options);
  if (!plan) return std::move(plan).error();
  all_pairs_stats stats{.plan = std::move(*plan)};
  if (n < 2) return stats;
  const auto tables = detail::build_tables(stats.plan.layout);
  const unsigned threads = threads_for(n, options.threads);
  if (options.on_pass) options.on_pass(1, 1);
  detail::pair_emitter out(sink, options.cross_split);
  detail::batch_run run(fingerprints, {}, tables, stats.plan.layout.k, threads, out);
  run.run();
  stats.candidates = run.candidates();
  stats.pairs = out.emitted();
  stats.passes = 1;
  stats.working_bytes = all_pairs_pass_bytes(n, threads);
  return stats;
}

result<all_pairs_stats> all_pairs(const fingerprint_scan& input, const all_pairs_options& options,
                                  const pair_sink& sink) {
  auto plan = plan_for(input.size, options);
  if (!plan) return std::move(plan).error();
  all_pairs_stats stats{.plan = std::move(*plan)};
  const uint64_t n = input.size;
  if (n < 2) return stats;
  const unsigned threads = threads_for(n, options.threads);
  const uint64_t limit = options.memory_limit, taken = options.memory_taken;
  // Everything fits: one pass over the whole input in memory.
  if (limit == 0 || all_pairs_pass_bytes(n, threads) + taken <= limit) {
    std::vector<uint64_t> fps;
    fps.reserve(n);
    if (auto st = input.read(
            [&](std::span<const uint64_t> b) { fps.insert(fps.end(), b.begin(), b.end()); });
        !st)
      return std::move(st).error();
    if (fps.size() != n) return changed_input(n, fps.size());
    all_pairs_options whole = options;
    whole.memory_limit = 0;
    return all_pairs(fps, whole, sink);
  }
  const auto tables = detail::build_tables(stats.plan.layout);
  const int k = stats.plan.layout.k;
  detail::pair_emitter out(sink, options.cross_split);
  const uint64_t fixed = all_pairs_pass_bytes(0, threads) + taken;
  const uint64_t capacity = limit > fixed ? (limit - fixed) / pass_bytes_per_record : 0;
  // The first scan: per group, counts of the lowest bits of its first block.
  const std::vector<table_group> groups = groups_of(tables);
  std::vector<int> finest(groups.size());
  std::vector<std::vector<uint64_t>> hist(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    finest[g] = std::min(max_selector_bits, groups[g].field_width - 1);
    hist[g].assign(std::size_t{1} << std::max(finest[g], 0), 0);
  }
  uint64_t seen = 0;
  if (auto st = input.read([&](std::span<const uint64_t> b) {
        seen += b.size();
        for (std::size_t g = 0; g < groups.size(); ++g) {
          const uint64_t mask = (uint64_t{1} << std::max(finest[g], 0)) - 1;
          const int shift = groups[g].field_shift;
          uint64_t* h = hist[g].data();
          for (uint64_t fp : b) ++h[(fp >> shift) & mask];
        }
      });
      !st)
    return std::move(st).error();
  if (seen != n) return changed_input(n, seen);
  std::vector<pass_plan> passes;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    bool packed = false;
    for (int sel = 0; sel <= std::max(finest[g], 0) && !packed; ++sel) {
      std::vector<pass_plan> mine;
      if (pack(hist[g], std::max(finest[g], 0), sel, capacity, g, mine)) {
        passes.insert(passes.end(), mine.begin(), mine.end());
        packed = true;
      }
    }
    if (!packed) {
      const uint64_t largest = *std::max_element(hist[g].begin(), hist[g].end());
      const std::string minimum =
          describe_bytes(all_pairs_pass_bytes(largest, threads) + taken, true);
      return invalid_parameter(
          {.name = "memory_limit",
           .value = describe_bytes(limit, false),
           .allowed = "at least " + minimum,
           .reason = describe_bytes(limit, false) + " is too small: " + std::to_string(largest) +
                     " fingerprints share the bits that split this input into passes; "
                     "the smallest limit for it is " +
                     minimum},
          {}, errc::too_large);
    }
  }
  std::vector<uint64_t> fps;
  std::vector<uint32_t> ids;
  uint64_t candidates = 0;
  for (std::size_t p = 0; p < passes.size() && !out.stopped(); ++p) {
    const pass_plan& pp = passes[p];
    const table_group& g = groups[pp.group];
    if (options.on_pass) options.on_pass(p + 1, passes.size());
    // Branch-free selection (a quarter or so of the records is taken, at random): every
    // record is written at the next slot, which advances only for a selected one; the slot
    // past the last is scratch.
    fps.resize(pp.records + 1);
    ids.resize(pp.records + 1);
    uint64_t* const fp_out = fps.data();
    uint32_t* const id_out = ids.data();
    const uint64_t sel_mask = (uint64_t{1} << pp.sel) - 1;
    const uint64_t lo = pp.lo, width = pp.hi - pp.lo, records = pp.records;
    const int shift = g.field_shift;
    uint64_t taken_now = 0;
    uint32_t ordinal = 0;
    if (auto st = input.read([&](std::span<const uint64_t> b) {
          uint64_t c = taken_now;
          uint32_t o = ordinal;
          for (uint64_t fp : b) {
            fp_out[c] = fp;
            id_out[c] = o++;
            c += static_cast<uint64_t>((((fp >> shift) & sel_mask) - lo) < width) & (c < records);
          }
          taken_now = c;
          ordinal = o;
        });
        !st)
      return std::move(st).error();
    if (taken_now != pp.records || ordinal != n)
      return make_error(errc::invalid_input,
                        "the input changed between passes (pass " + std::to_string(p + 1) + ")");
    fps.resize(pp.records);
    ids.resize(pp.records);
    detail::batch_run run(
        fps, ids, tables, k, threads, out,
        {.first_shift = g.shift, .first_width = g.width, .reserved_low_bits = pp.sel});
    run.run();
    candidates += run.candidates();
    stats.working_bytes = std::max(stats.working_bytes, all_pairs_pass_bytes(pp.records, threads));
  }
  stats.candidates = candidates;
  stats.pairs = out.emitted();
  stats.passes = passes.size();
  return stats;
}

result<all_pairs_stats> all_pairs_baseline(std::span<const uint64_t> fingerprints,
                                           const all_pairs_options& options,
                                           const pair_sink& sink) {
  auto plan = plan_for(fingerprints.size(), options);
  if (!plan) return std::move(plan).error();
  all_pairs_stats stats{.plan = std::move(*plan)};
  const auto tables = detail::build_tables(stats.plan.layout);
  const int k = stats.plan.layout.k;
  detail::pair_emitter out(sink, options.cross_split);
  detail::pair_emitter::buffer buf(out);
  std::vector<std::pair<uint64_t, uint32_t>> keyed(fingerprints.size());
  for (std::size_t t = 0; t < tables.size() && !out.stopped(); ++t) {
    for (std::size_t i = 0; i < fingerprints.size(); ++i)
      keyed[i] = {tables[t].apply(fingerprints[i]), static_cast<uint32_t>(i)};
    std::sort(keyed.begin(), keyed.end());
    const int shift = 64 - tables[t].prefix_bits;
    for (std::size_t i = 0; i < keyed.size();) {
      std::size_t j = i + 1;
      while (j < keyed.size() && (keyed[j].first >> shift) == (keyed[i].first >> shift)) ++j;
      for (std::size_t a = i; a < j; ++a)
        for (std::size_t b = a + 1; b < j; ++b) {
          ++stats.candidates;
          const uint64_t fa = fingerprints[keyed[a].second], fb = fingerprints[keyed[b].second];
          const int d = std::popcount(fa ^ fb);
          if (d > k || detail::earlier_table_matches(tables, t, fa ^ fb)) continue;
          buf.push(index_pair{std::min(keyed[a].second, keyed[b].second),
                              std::max(keyed[a].second, keyed[b].second), d});
        }
      i = j;
    }
  }
  buf.flush();
  stats.pairs = out.emitted();
  return stats;
}

}  // namespace simdup
