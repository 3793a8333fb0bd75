// Batch all-pairs. Tables whose keys start with the same bits share one partition: every
// thread scatters its share of the input by those top b1 bits (one parallel counting sort per
// partition; the histograms of all partitions come from a single pass). In the lexicographic
// table order a table's first block is one of the first k + 1, so C(m, m - k) tables need
// only k + 1 scatters (5 blocks, k = 3: 4 scatters for 10 tables). Then threads take buckets
// (a few thousand records, in cache) and, per table of the partition, chain the records by a
// hash of the table's remaining prefix bits; only records of one chain are compared, so the
// mostly-singleton groups cost a hash and a few stores each. Memory: the input, one 12-byte
// record per fingerprint, and per thread a small hash table.
#include <simdup/all_pairs.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <memory>
#include <thread>
#include <vector>

#include "index/pair_emitter.hpp"
#include "index/tables.hpp"

namespace simdup {
namespace {

/// Fingerprint and ordinal. Packed to 12 bytes: the scatter is memory-bound.
struct __attribute__((packed, aligned(4))) record {
  uint64_t fp;
  uint32_t id;
};
static_assert(sizeof(record) == 12);

constexpr uint32_t no_record = UINT32_MAX;
/// Largest hash table (log2 slots) per bucket: bounds per-thread memory on skewed input, where
/// the long chains are true matches anyway.
constexpr int max_hash_bits = 18;

/// One table, in fingerprint coordinates.
struct table_info {
  uint64_t mask;                  // prefix bits
  uint64_t rest_mask;             // prefix bits outside the partition bits
  std::vector<uint64_t> earlier;  // prefix masks of the tables before it
};

/// Tables sharing the partition on fingerprint bits [shift, shift + bits).
struct partition {
  int shift;
  std::vector<table_info> tables;
};

/// Per-thread scratch of the bucket pass.
struct scratch {
  std::vector<uint32_t> head;    // hash slot -> last record of its chain; kept all no_record
  std::vector<uint32_t> next;    // record -> previous record of its chain
  std::vector<uint32_t> slot;    // record -> its hash slot
  std::vector<uint32_t> listed;  // records with an earlier record in their slot
};

class batch_run {
 public:
  batch_run(std::span<const uint64_t> fps, const std::vector<detail::table_perm>& tables, int k,
            unsigned threads, detail::pair_emitter& out)
      : fps_(fps), k_(k), threads_(threads), out_(out), sync_(threads) {
    // Partition bits: the top b1 key bits, which all lie in the table's first contiguous run
    // (moves[0] is placed at the top of the key). Buckets of about 2^12 records fit in cache.
    b1_ = std::max(0, static_cast<int>(std::bit_width(fps.size())) - 12);
    for (const detail::table_perm& t : tables)
      b1_ = std::min({b1_, t.prefix_bits, std::popcount(t.moves.front().mask)});
    for (std::size_t t = 0; t < tables.size(); ++t) {
      const detail::bit_move& top = tables[t].moves.front();
      const int shift = top.src_shift + std::popcount(top.mask) - b1_;
      const uint64_t part_mask = b1_ == 0 ? 0 : ((uint64_t{1} << b1_) - 1) << shift;
      table_info info{tables[t].prefix_mask, tables[t].prefix_mask & ~part_mask, {}};
      for (std::size_t u = 0; u < t; ++u) info.earlier.push_back(tables[u].prefix_mask);
      auto it = std::find_if(parts_.begin(), parts_.end(),
                             [&](const partition& p) { return b1_ == 0 || p.shift == shift; });
      if (it == parts_.end()) it = parts_.insert(parts_.end(), partition{shift, {}});
      it->tables.push_back(std::move(info));
    }
    records_ = std::make_unique_for_overwrite<record[]>(fps.size());
    const std::size_t nb = std::size_t{1} << b1_;
    hist_.assign(threads, std::vector<uint32_t>(nb * parts_.size(), 0));
    starts_.resize(nb + 1);
  }

  void run() {
    std::vector<std::thread> pool;
    for (unsigned th = 1; th < threads_; ++th) pool.emplace_back([this, th] { worker(th); });
    worker(0);
    for (auto& t : pool) t.join();
  }

  uint64_t candidates() const { return candidates_.load(); }

 private:
  uint32_t bucket_of(uint64_t fp, int shift) const {
    return b1_ == 0 ? 0 : static_cast<uint32_t>((fp >> shift) & ((uint64_t{1} << b1_) - 1));
  }

  void worker(unsigned th) {
    detail::pair_emitter::buffer buf(out_);
    scratch sc;
    uint64_t cand = 0;
    const std::size_t n = fps_.size();
    const std::size_t lo = n * th / threads_, hi = n * (th + 1) / threads_;
    const std::size_t nb = std::size_t{1} << b1_;
    // Histograms of every partition in one pass over this thread's share.
    std::vector<uint32_t>& h = hist_[th];
    for (std::size_t i = lo; i < hi; ++i)
      for (std::size_t p = 0; p < parts_.size(); ++p)
        ++h[p * nb + bucket_of(fps_[i], parts_[p].shift)];
    sync_.arrive_and_wait();  // every histogram is complete
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const partition& part = parts_[p];
      if (th == 0) {
        next_bucket_.store(0);
        uint32_t pos = 0;
        for (std::size_t b = 0; b < nb; ++b) {
          starts_[b] = pos;
          for (unsigned t2 = 0; t2 < threads_; ++t2) {
            const uint32_t c = hist_[t2][p * nb + b];
            hist_[t2][p * nb + b] = pos;  // becomes the thread's write cursor for bucket b
            pos += c;
          }
        }
        starts_[nb] = pos;
      }
      sync_.arrive_and_wait();
      record* recs = records_.get();
      uint32_t* cursor = h.data() + p * nb;
      for (std::size_t i = lo; i < hi; ++i) {
        const uint64_t fp = fps_[i];
        recs[cursor[bucket_of(fp, part.shift)]++] = record{fp, static_cast<uint32_t>(i)};
      }
      sync_.arrive_and_wait();
      constexpr std::size_t chunk = 16;
      for (std::size_t c; !out_.stopped() && (c = next_bucket_.fetch_add(chunk)) < nb;) {
        for (std::size_t b = c; b < std::min(nb, c + chunk); ++b) {
          const std::size_t size = starts_[b + 1] - starts_[b];
          if (size < 2) continue;
          for (const table_info& t : part.tables)
            chain_bucket(t, recs + starts_[b], size, sc, buf, cand);
        }
      }
      sync_.arrive_and_wait();
    }
    buf.flush();
    candidates_ += cand;
  }

  /// Finds, for one table, the pairs of a bucket that share the table's prefix: records are
  /// chained by a hash of the prefix bits outside the partition, and each record is compared
  /// with the earlier records of its chain. The walk only tests prefix equality; the rare
  /// matches go to check() out of line, which keeps the loop in registers.
  void chain_bucket(const table_info& t, const record* g, std::size_t n, scratch& sc,
                    detail::pair_emitter::buffer& buf, uint64_t& cand) const {
    const uint64_t mask = t.mask;
    if (t.rest_mask == 0) {  // the partition is the whole prefix
      for (std::size_t i = 1; i < n; ++i)
        for (std::size_t j = 0; j < i; ++j) check(t, g[i], g[j], buf, cand);
      return;
    }
    const int bits = std::min(max_hash_bits, static_cast<int>(std::bit_width(n)) + 2);
    if (sc.head.size() < (std::size_t{1} << bits))
      sc.head.resize(std::size_t{1} << bits, no_record);
    if (sc.next.size() < n) {
      sc.next.resize(n);
      sc.slot.resize(n);
      sc.listed.resize(n);
    }
    uint32_t* const head = sc.head.data();
    uint32_t* const next = sc.next.data();
    uint32_t* const slot = sc.slot.data();
    const int shift = 64 - bits;
    const uint64_t rest = t.rest_mask;
    for (std::size_t i = 0; i < n; ++i)
      slot[i] = static_cast<uint32_t>(((g[i].fp & rest) * 0x9E3779B97F4A7C15ull) >> shift);
    // Chain without branches, then list the records whose chain is not empty (a minority):
    // a branch per record on "has an earlier record in its slot" would mispredict often.
    uint32_t* const listed = sc.listed.data();
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      next[i] = head[slot[i]];
      head[slot[i]] = static_cast<uint32_t>(i);
      listed[count] = static_cast<uint32_t>(i);
      count += next[i] != no_record;
    }
    for (std::size_t c = 0; c < count; ++c) {
      const uint32_t i = listed[c];
      const uint64_t fp = g[i].fp;
      for (uint32_t j = next[i]; j != no_record; j = next[j])
        if (((fp ^ g[j].fp) & mask) == 0) check(t, g[i], g[j], buf, cand);
    }
    for (std::size_t i = 0; i < n; ++i) head[slot[i]] = no_record;
  }

  /// Reports the pair when it shares the table's prefix, is within k, and no earlier table
  /// shares its prefix (that table reported it).
  [[gnu::noinline]] void check(const table_info& t, const record& a, const record& b,
                               detail::pair_emitter::buffer& buf, uint64_t& cand) const {
    const uint64_t x = a.fp ^ b.fp;
    ++cand;
    const int d = std::popcount(x);
    if (d > k_) return;
    for (uint64_t m : t.earlier)
      if ((x & m) == 0) return;
    buf.push(index_pair{std::min(a.id, b.id), std::max(a.id, b.id), d});
  }

  std::span<const uint64_t> fps_;
  int k_;
  unsigned threads_;
  detail::pair_emitter& out_;
  std::barrier<> sync_;
  int b1_ = 0;
  std::vector<partition> parts_;
  std::unique_ptr<record[]> records_;
  std::vector<std::vector<uint32_t>> hist_;  // per thread and partition: counts, then cursors
  std::vector<uint32_t> starts_;             // bucket starts (+ end) of the current partition
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
