// Batch all-pairs. For each table, every thread permutes its share of the input and the
// records are scattered by the top b1 key bits (pass 1, one parallel counting sort); then
// threads take buckets and group each by the rest of the prefix (pass 2, in cache), checking
// every pair of a group. Memory: the input plus one 12-byte record per fingerprint.
#include <simdup/all_pairs.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "index/pair_emitter.hpp"
#include "index/tables.hpp"

namespace simdup {
namespace {

/// Permuted key and ordinal. Packed to 12 bytes: the run is memory-bound.
struct __attribute__((packed, aligned(4))) record {
  uint64_t key;
  uint32_t id;
};
static_assert(sizeof(record) == 12);

/// Per-table constants.
struct table_setup {
  const detail::table_perm* perm;
  int prefix_bits;
  int b1;                               // pass-1 bits (top of the key)
  std::vector<uint64_t> earlier_masks;  // prefixes of earlier tables, in this table's key bits
};

class batch_run {
 public:
  batch_run(std::span<const uint64_t> fps, const std::vector<detail::table_perm>& tables, int k,
            unsigned threads, detail::pair_emitter& out)
      : fps_(fps), k_(k), threads_(threads), out_(out), sync_(threads) {
    const int bw = std::bit_width(fps.size());
    for (std::size_t t = 0; t < tables.size(); ++t) {
      table_setup s{&tables[t], tables[t].prefix_bits, 0, {}};
      s.b1 = std::min(s.prefix_bits, std::clamp(bw - 10, 1, 12));
      for (std::size_t u = 0; u < t; ++u)
        s.earlier_masks.push_back(tables[t].apply(tables[u].prefix_mask));
      setups_.push_back(std::move(s));
    }
    records_ = std::make_unique_for_overwrite<record[]>(fps.size());
    hist_.assign(threads, {});
  }

  void run() {
    std::vector<std::thread> pool;
    for (unsigned th = 1; th < threads_; ++th) pool.emplace_back([this, th] { worker(th); });
    worker(0);
    for (auto& t : pool) t.join();
  }

  uint64_t candidates() const { return candidates_.load(); }

 private:
  void worker(unsigned th) {
    detail::pair_emitter::buffer buf(out_);
    std::vector<record> scratch;
    std::vector<uint32_t> counts;
    uint64_t cand = 0;
    const std::size_t n = fps_.size();
    const std::size_t lo = n * th / threads_, hi = n * (th + 1) / threads_;
    for (const table_setup& s : setups_) {
      const std::size_t nb = std::size_t{1} << s.b1;
      const int shift1 = 64 - s.b1;
      if (th == 0) next_bucket_.store(0);
      // Pass 1: count, then (after offsets are known) scatter.
      std::vector<uint32_t>& h = hist_[th];
      h.assign(nb, 0);
      for (std::size_t i = lo; i < hi; ++i) ++h[s.perm->apply(fps_[i]) >> shift1];
      sync_.arrive_and_wait();
      if (th == 0) {
        starts_.assign(nb + 1, 0);
        uint32_t pos = 0;
        for (std::size_t b = 0; b < nb; ++b) {
          starts_[b] = pos;
          for (unsigned t2 = 0; t2 < threads_; ++t2) {
            const uint32_t c = hist_[t2][b];
            hist_[t2][b] = pos;  // becomes the thread's write cursor for bucket b
            pos += c;
          }
        }
        starts_[nb] = pos;
      }
      sync_.arrive_and_wait();
      record* recs = records_.get();
      for (std::size_t i = lo; i < hi; ++i) {
        const uint64_t key = s.perm->apply(fps_[i]);
        recs[h[key >> shift1]++] = record{key, static_cast<uint32_t>(i)};
      }
      sync_.arrive_and_wait();
      // Pass 2: buckets in chunks, dynamically shared.
      constexpr std::size_t chunk = 16;
      for (std::size_t c; !out_.stopped() && (c = next_bucket_.fetch_add(chunk)) < nb;) {
        for (std::size_t b = c; b < std::min(nb, c + chunk); ++b)
          group_bucket(s, recs + starts_[b], starts_[b + 1] - starts_[b], scratch, counts, buf,
                       cand);
      }
      sync_.arrive_and_wait();
    }
    buf.flush();
    candidates_ += cand;
  }

  /// Checks every pair of a group of records with equal prefixes.
  void check_group(const table_setup& s, const record* g, std::size_t n,
                   detail::pair_emitter::buffer& buf, uint64_t& cand) const {
    cand += n * (n - 1) / 2;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const uint64_t ki = g[i].key;
      const uint32_t ii = g[i].id;
      for (std::size_t j = i + 1; j < n; ++j) {
        const uint64_t x = ki ^ g[j].key;
        const int d = std::popcount(x);
        if (d > k_) continue;
        bool earlier = false;
        for (uint64_t m : s.earlier_masks) earlier |= (x & m) == 0;
        if (earlier) continue;
        const uint32_t jj = g[j].id;
        buf.push(index_pair{std::min(ii, jj), std::max(ii, jj), d});
      }
    }
  }

  /// Sorts a small run by key and checks each run of equal prefix.
  void sort_and_check(const table_setup& s, record* g, std::size_t n,
                      detail::pair_emitter::buffer& buf, uint64_t& cand) const {
    std::sort(g, g + n, [](const record& a, const record& b) { return a.key < b.key; });
    const int shift = 64 - s.prefix_bits;
    for (std::size_t i = 0; i < n;) {
      std::size_t j = i + 1;
      const uint64_t p = g[i].key >> shift;
      while (j < n && (g[j].key >> shift) == p) ++j;
      if (j - i > 1) check_group(s, g + i, j - i, buf, cand);
      i = j;
    }
  }

  /// Pass 2 for one bucket: all records share the top b1 bits.
  void group_bucket(const table_setup& s, record* g, std::size_t n, std::vector<record>& scratch,
                    std::vector<uint32_t>& counts, detail::pair_emitter::buffer& buf,
                    uint64_t& cand) const {
    if (n < 2) return;
    const int rest = s.prefix_bits - s.b1;
    if (rest == 0) return check_group(s, g, n, buf, cand);
    if (n <= 32) return sort_and_check(s, g, n, buf, cand);
    // Counting sort on the next r2 bits (about log2(n): sub-buckets of ~1), then sort the rare
    // sub-buckets that still hold several records if prefix bits remain.
    const int r2 = std::min(rest, static_cast<int>(std::bit_width(n)));
    const int shift2 = 64 - s.b1 - r2;
    const uint64_t mask2 = (uint64_t{1} << r2) - 1;
    counts.assign((std::size_t{1} << r2) + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++counts[((g[i].key >> shift2) & mask2) + 1];
    for (std::size_t b = 1; b < counts.size(); ++b) counts[b] += counts[b - 1];
    scratch.resize(n);
    for (std::size_t i = 0; i < n; ++i) scratch[counts[(g[i].key >> shift2) & mask2]++] = g[i];
    // counts[b] is now the end of sub-bucket b.
    std::size_t begin = 0;
    for (std::size_t b = 0; b + 1 < counts.size(); ++b) {
      const std::size_t end = counts[b];
      if (end - begin > 1) {
        if (r2 == rest)
          check_group(s, scratch.data() + begin, end - begin, buf, cand);
        else
          sort_and_check(s, scratch.data() + begin, end - begin, buf, cand);
      }
      begin = end;
    }
  }

  std::span<const uint64_t> fps_;
  int k_;
  unsigned threads_;
  detail::pair_emitter& out_;
  std::barrier<> sync_;
  std::vector<table_setup> setups_;
  std::unique_ptr<record[]> records_;
  std::vector<std::vector<uint32_t>> hist_;  // per thread: counts, then write cursors
  std::vector<uint32_t> starts_;             // bucket starts (+ end)
  std::atomic<std::size_t> next_bucket_{0};
  std::atomic<uint64_t> candidates_{0};
};

result<index_plan> plan_for(std::size_t n, const all_pairs_options& options) {
  if (n > UINT32_MAX)
    return make_error(errc::too_large, "all_pairs handles at most 2^32 - 1 fingerprints");
  if (options.layout.widths.empty())
    return make_plan(
        {.n = n, .k = options.k, .memory = options.memory, .purpose = plan_purpose::batch});
  return evaluate_layout(options.layout, n, plan_purpose::batch);
}

}  // namespace

result<all_pairs_stats> all_pairs(std::span<const uint64_t> fingerprints,
                                  const all_pairs_options& options, const pair_sink& sink) {
  auto plan = plan_for(fingerprints.size(), options);
  if (!plan) return std::move(plan).error();
  all_pairs_stats stats{.plan = std::move(*plan)};
  if (fingerprints.size() < 2) return stats;
  const auto tables = detail::build_tables(stats.plan.layout);
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  // Small inputs: thread start-up costs more than it saves.
  if (fingerprints.size() < 100'000) threads = 1;
  threads = std::max(1u, threads);
  detail::pair_emitter out(sink);
  batch_run run(fingerprints, tables, stats.plan.layout.k, threads, out);
  run.run();
  stats.candidates = run.candidates();
  stats.pairs = out.emitted();
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
  detail::pair_emitter out(sink);
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
