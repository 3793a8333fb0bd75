// Internal: the in-memory batch pass of all_pairs. Tables whose keys start with the same bits
// share one partition on the top b1 bits of their first block: in the lexicographic table order
// a table's first block is one of the first k + 1, so C(m, m - k) tables need only k + 1
// partitions (5 blocks, k = 3: 4 for 10 tables). Per partition, the threads scatter their shares
// of the input by the top bits (at most 64 buckets: more write streams thrash the caches),
// counting the sub-buckets of the remaining partition bits on the way; then threads take
// buckets, sort each into sub-buckets of a few thousand records in cache, and per table chain
// the records by the prefix bits outside the partition (extracted exactly, or hashed when there
// are too many). Only records of one chain are compared, so the mostly-singleton groups cost a
// few instructions each. Memory: the input, one 12-byte record per fingerprint, per thread a
// bucket copy and a small slot table.
//
// A batch_scope narrows a run to the tables of one first block, over a subset of the input
// with explicit ordinals: the external engine (all_pairs_external.cpp) runs each partition on
// the records of one pass.
#pragma once

#include <simdup/all_pairs.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <bit>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "index/huge_block.hpp"
#include "index/pair_emitter.hpp"
#include "index/tables.hpp"

namespace simdup::detail {

/// Which part of the work a batch_run does.
struct batch_scope {
  /// Only the tables whose first block (first bit move) starts at this fingerprint bit and
  /// has this width; width 0 (default): every table.
  int first_shift = 0;
  int first_width = 0;
  /// Low bits of the prefix part of that first block (its top min(width, prefix bits) bits)
  /// left out of the partition bits: the external engine selects a pass's records by them.
  int reserved_low_bits = 0;
};

namespace batch_pass {

/// Fingerprint and ordinal. Packed to 12 bytes: the scatter is memory-bound.
struct __attribute__((packed, aligned(4))) record {
  uint64_t fp;
  uint32_t id;
};
static_assert(sizeof(record) == 12);

constexpr uint32_t no_record = UINT32_MAX;
/// Largest slot table (log2 slots) per bucket: bounds per-thread memory on skewed input, where
/// the long chains are true matches anyway.
constexpr int max_slot_bits = 18;
/// Most contiguous runs of rest bits extracted exactly; tables with more are hashed.
constexpr int max_exact_runs = 3;
/// Partition bits scattered through memory in the first pass.
constexpr int max_msd_bits = 6;

/// A contiguous run of a table's prefix bits outside the partition: `mask` (low bits) taken at
/// `shift` of the fingerprint lands at `dst` of the slot index.
struct rest_run {
  int shift = 0;
  int dst = 0;
  uint64_t mask = 0;
};

/// One table, in fingerprint coordinates.
struct table_info {
  uint64_t mask;                  // prefix bits
  uint64_t rest_mask;             // prefix bits outside the partition bits
  int rest_bits;                  // popcount(rest_mask)
  std::vector<rest_run> runs;     // rest_mask as runs, least significant first
  std::vector<uint64_t> earlier;  // prefix masks of the tables before it
};

/// Splits a mask into its contiguous runs of ones, packed into a slot index.
std::vector<rest_run> runs_of(uint64_t mask) {
  std::vector<rest_run> runs;
  int dst = 0;
  while (mask != 0) {
    const int low = std::countr_zero(mask);
    const int width = std::countr_one(mask >> low);
    const uint64_t ones = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    runs.push_back({low, dst, ones});
    dst += width;
    mask &= ~(ones << low);
  }
  return runs;
}

/// Tables sharing the partition on fingerprint bits [shift, shift + bits).
struct partition {
  int shift;
  std::vector<table_info> tables;
};

/// Per-thread scratch of the bucket pass. Slot heads hold `stamp + position`: entries below
/// the current stamp are stale, so the table is never cleared between buckets (only when the
/// 32-bit stamp would wrap).
struct scratch {
  std::vector<uint32_t> head;    // slot -> stamp + last record of its chain
  std::vector<uint32_t> next;    // record -> previous record of its chain
  std::vector<uint32_t> listed;  // records with an earlier record in their slot
  std::vector<uint32_t> cursor;  // sub-scatter write positions
  uint32_t stamp = 1;
};

/// Words of huge-page storage for n records. The scatter writes to thousands of buckets at
/// once; with 4 KiB pages nearly every store would also miss the TLB.
inline std::size_t record_words(std::size_t n) {
  return (n * sizeof(record) + 7) / 8;
}
static_assert(std::is_trivially_copyable_v<record> && alignof(record) <= 64);

class batch_run {
 public:
  /// `ids`: the ordinal reported for each fingerprint; empty: its position in `fps`.
  batch_run(std::span<const uint64_t> fps, std::span<const uint32_t> ids,
            const std::vector<table_perm>& tables, int k, unsigned threads, pair_emitter& out,
            const batch_scope& scope = {})
      : fps_(fps),
        ids_(ids),
        k_(k),
        threads_(threads),
        out_(out),
        sync_(threads),
        records_(record_words(std::max<std::size_t>(fps.size(), 1))) {
    // Partition bits: the top b1 key bits, which all lie in the table's first contiguous run
    // (moves[0] is placed at the top of the key). Buckets of about 2^12 records fit in cache.
    auto in_scope = [&scope](const table_perm& t) {
      const bit_move& top = t.moves.front();
      return scope.first_width == 0 ||
             (top.src_shift == scope.first_shift && std::popcount(top.mask) == scope.first_width);
    };
    b1_ = std::max(0, static_cast<int>(std::bit_width(fps.size())) - 12);
    for (const table_perm& t : tables)
      if (in_scope(t))
        b1_ = std::min(b1_, std::min(t.prefix_bits, std::popcount(t.moves.front().mask)) -
                                scope.reserved_low_bits);
    b1_ = std::max(b1_, 0);
    for (std::size_t t = 0; t < tables.size(); ++t) {
      if (!in_scope(tables[t])) continue;
      const bit_move& top = tables[t].moves.front();
      // With no partition bits every table shares the one partition (shift 0 keeps the
      // bucket shifts below 64).
      const int shift = b1_ == 0 ? 0 : top.src_shift + std::popcount(top.mask) - b1_;
      const uint64_t part_mask = b1_ == 0 ? 0 : ((uint64_t{1} << b1_) - 1) << shift;
      const uint64_t rest = tables[t].prefix_mask & ~part_mask;
      table_info info{tables[t].prefix_mask, rest, std::popcount(rest), runs_of(rest), {}};
      for (std::size_t u = 0; u < t; ++u) info.earlier.push_back(tables[u].prefix_mask);
      auto it = std::find_if(parts_.begin(), parts_.end(),
                             [&](const partition& p) { return b1_ == 0 || p.shift == shift; });
      if (it == parts_.end()) it = parts_.insert(parts_.end(), partition{shift, {}});
      it->tables.push_back(std::move(info));
    }
    // Two-pass scatter: through memory only on the top bits (more than about 64 write streams
    // per core thrash the caches), then each bucket again, in cache, on the rest.
    msd_bits_ = std::min(b1_, max_msd_bits);
    tmp_cap_ = static_cast<uint32_t>(
        std::max<std::size_t>(fps.size() / (8 * std::size_t{threads}), std::size_t{1} << 16));
    const std::size_t nb = std::size_t{1} << msd_bits_;
    hist_.assign(threads, std::vector<uint32_t>(nb * (parts_.size() + 1), 0));
    sub_hist_.assign(threads, std::vector<uint32_t>(nb << (b1_ - msd_bits_)));
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
  void worker(unsigned th) {
    pair_emitter::buffer buf(out_);
    scratch sc;
    uint64_t cand = 0;
    const std::size_t n = fps_.size();
    const std::size_t lo = n * th / threads_, hi = n * (th + 1) / threads_;
    const std::size_t nb = std::size_t{1} << msd_bits_;
    const uint64_t msd_mask = nb - 1;
    const int low_bits = b1_ - msd_bits_;
    const std::size_t nsub = std::size_t{1} << low_bits;
    // The first partition's histogram of this thread's share; each scatter counts the next.
    std::vector<uint32_t>& h = hist_[th];
    const int first_shift = parts_[0].shift + low_bits;
    for (std::size_t i = lo; i < hi; ++i) ++h[(fps_[i] >> first_shift) & msd_mask];
    sync_.arrive_and_wait();        // the first histogram is complete
    std::unique_ptr<record[]> tmp;  // the sub-scatter target, sized on first use
    std::size_t tmp_size = 0;
    std::vector<uint32_t> sub_start(nsub + 1);
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
      // The scatter through memory also counts the sub-buckets and the next partition's
      // buckets (nearly free: it waits on stores), which saves passes over the input and a
      // counting loop in cache. The last partition counts into a spare histogram.
      record* recs = records();
      uint32_t* cursor = h.data() + p * nb;
      uint32_t* next_hist = h.data() + (p + 1) * nb;
      uint32_t* sub = sub_hist_[th].data();
      std::fill_n(sub, nb * nsub, 0);
      const int shift = part.shift;
      const int next_shift = parts_[std::min(p + 1, parts_.size() - 1)].shift + low_bits;
      const uint64_t sub_mask = nsub - 1;
      for (std::size_t i = lo; i < hi; ++i) {
        const uint64_t fp = fps_[i];
        const std::size_t b = (fp >> (shift + low_bits)) & msd_mask;
        const uint32_t id = ids_.empty() ? static_cast<uint32_t>(i) : ids_[i];
        recs[cursor[b]++] = record{fp, id};
        ++sub[b * nsub + ((fp >> shift) & sub_mask)];
        ++next_hist[(fp >> next_shift) & msd_mask];
      }
      sync_.arrive_and_wait();
      for (std::size_t b; !out_.stopped() && (b = next_bucket_.fetch_add(1)) < nb;) {
        const record* g = recs + starts_[b];
        const uint32_t size = starts_[b + 1] - starts_[b];
        if (low_bits == 0 || size > tmp_cap_) {  // small input, or skewed: one bucket
          pairs_in_bucket(part, g, size, low_bits == 0, sc, buf, cand);
          continue;
        }
        if (tmp_size < size) {
          tmp_size = std::max<std::size_t>(size, std::min<std::size_t>(tmp_cap_, size * 2));
          tmp = std::make_unique_for_overwrite<record[]>(tmp_size);
        }
        // Sub-bucket starts from every thread's counts, then the in-cache counting sort.
        uint32_t pos = 0;
        for (std::size_t s = 0; s < nsub; ++s) {
          sub_start[s] = pos;
          for (unsigned t2 = 0; t2 < threads_; ++t2) pos += sub_hist_[t2][b * nsub + s];
        }
        sub_start[nsub] = pos;
        std::vector<uint32_t>& cur = sc.cursor;
        cur.assign(sub_start.begin(), sub_start.end() - 1);
        record* out = tmp.get();
        for (uint32_t i = 0; i < size; ++i) out[cur[(g[i].fp >> shift) & sub_mask]++] = g[i];
        for (std::size_t s = 0; s < nsub; ++s)
          pairs_in_bucket(part, out + sub_start[s], sub_start[s + 1] - sub_start[s], true, sc, buf,
                          cand);
      }
      sync_.arrive_and_wait();
    }
    buf.flush();
    candidates_ += cand;
  }

  /// Runs every table of the partition on one bucket. `whole` tells whether the bucket's
  /// records share all the partition bits (a sub-bucket) or only the top ones (an unsplit
  /// bucket of skewed input).
  void pairs_in_bucket(const partition& part, const record* g, uint32_t n, bool whole, scratch& sc,
                       pair_emitter::buffer& buf, uint64_t& cand) const {
    if (n < 2) return;
    for (const table_info& t : part.tables) pairs_in_table(t, g, n, whole, sc, buf, cand);
  }

  /// Finds, for one table, the pairs of a bucket that share the table's prefix. Records are
  /// chained by the prefix bits outside the partition: extracted exactly when they are few
  /// and the bucket shares the whole partition (then a chain holds only true prefix matches),
  /// hashed otherwise (then chains are checked against the whole prefix).
  void pairs_in_table(const table_info& t, const record* g, uint32_t n, bool whole, scratch& sc,
                      pair_emitter::buffer& buf, uint64_t& cand) const {
    if (whole && t.rest_mask == 0) {  // the partition is the whole prefix
      for (uint32_t i = 1; i < n; ++i)
        for (uint32_t j = 0; j < i; ++j) compare(t, g[i], g[j], buf, cand);
      return;
    }
    const int fit = static_cast<int>(std::bit_width(n)) + 3;
    const bool exact = whole && t.rest_bits <= std::min(fit, max_slot_bits) &&
                       t.runs.size() <= static_cast<std::size_t>(max_exact_runs);
    const int bits = exact ? t.rest_bits : std::min(max_slot_bits, fit - 1);
    if (sc.head.size() < (std::size_t{1} << bits)) sc.head.resize(std::size_t{1} << bits, 0);
    if (sc.next.size() < n) {
      sc.next.resize(n);
      sc.listed.resize(n);
    }
    if (sc.stamp > UINT32_MAX - n) {  // the stamp would wrap: forget every slot
      std::fill(sc.head.begin(), sc.head.end(), 0);
      sc.stamp = 1;
    }
    if (!exact) {
      const int shift = 64 - bits;
      const uint64_t rest = whole ? t.rest_mask : t.mask;
      chain<false>(t, g, n, sc, buf, cand, [rest, shift](uint64_t fp) {
        return static_cast<uint32_t>(((fp & rest) * 0x9E3779B97F4A7C15ull) >> shift);
      });
      return;
    }
    std::array<rest_run, max_exact_runs> r{};
    std::copy(t.runs.begin(), t.runs.end(), r.begin());
    auto bits_of = [](uint64_t fp, const rest_run& run) {
      return static_cast<uint32_t>(((fp >> run.shift) & run.mask) << run.dst);
    };
    switch (t.runs.size()) {
      case 1:
        chain<true>(t, g, n, sc, buf, cand, [=](uint64_t fp) { return bits_of(fp, r[0]); });
        break;
      case 2:
        chain<true>(t, g, n, sc, buf, cand,
                    [=](uint64_t fp) { return bits_of(fp, r[0]) | bits_of(fp, r[1]); });
        break;
      default:
        chain<true>(t, g, n, sc, buf, cand, [=](uint64_t fp) {
          return bits_of(fp, r[0]) | bits_of(fp, r[1]) | bits_of(fp, r[2]);
        });
    }
  }

  /// Chains the records by slot without branches, lists the records whose chain is not empty
  /// (a minority: a branch per record would mispredict often), then compares each listed
  /// record with the earlier records of its chain. With exact slots every chained pair shares
  /// the prefix; hashed slots need the prefix test.
  template <bool Exact, class SlotOf>
  void chain(const table_info& t, const record* g, uint32_t n, scratch& sc,
             pair_emitter::buffer& buf, uint64_t& cand, SlotOf slot_of) const {
    uint32_t* const head = sc.head.data();
    uint32_t* const next = sc.next.data();
    uint32_t* const listed = sc.listed.data();
    const uint32_t stamp = sc.stamp;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t& slot = head[slot_of(g[i].fp)];
      const uint32_t prev = slot;
      slot = stamp + i;
      // Arithmetic, not a conditional: compilers turn the latter into a branch here.
      const uint32_t stale = prev < stamp;
      next[i] = (prev - stamp) | (0u - stale);  // a stale slot leaves no_record
      listed[count] = i;
      count += stale ^ 1u;
    }
    sc.stamp += n;
    const uint64_t mask = t.mask;
    uint64_t local = 0;  // a register, where the caller's counter would be a store per pair
    for (uint32_t c = 0; c < count; ++c) {
      const uint32_t i = listed[c];
      const uint64_t fp = g[i].fp;
      for (uint32_t j = next[i]; j != no_record; j = next[j])
        if (Exact || ((fp ^ g[j].fp) & mask) == 0) compare(t, g[i], g[j], buf, local);
    }
    cand += local;
  }

  /// A pair sharing the table's prefix: counted, and kept when within k (rare, out of line).
  void compare(const table_info& t, const record& a, const record& b, pair_emitter::buffer& buf,
               uint64_t& cand) const {
    ++cand;
    if (std::popcount(a.fp ^ b.fp) <= k_) report(t, a, b, buf);
  }

  /// Reports the pair unless an earlier table shares its prefix (that table reported it).
  [[gnu::noinline]] static void report(const table_info& t, const record& a, const record& b,
                                       pair_emitter::buffer& buf) {
    const uint64_t x = a.fp ^ b.fp;
    for (uint64_t m : t.earlier)
      if ((x & m) == 0) return;
    buf.push(index_pair{std::min(a.id, b.id), std::max(a.id, b.id), std::popcount(x)});
  }

  std::span<const uint64_t> fps_;
  std::span<const uint32_t> ids_;
  int k_;
  unsigned threads_;
  pair_emitter& out_;
  std::barrier<> sync_;
  int b1_ = 0;            // partition bits per table
  int msd_bits_ = 0;      // of which scattered through memory
  uint32_t tmp_cap_ = 0;  // largest bucket sub-scattered (per-thread memory bound)
  std::vector<partition> parts_;
  /// Record storage (huge_block data is at least 64-byte aligned: record needs 4).
  huge_block records_;
  record* records() const noexcept { return reinterpret_cast<record*>(records_.data); }
  /// Per thread, per partition and a spare: bucket counts, then write cursors.
  std::vector<std::vector<uint32_t>> hist_;
  std::vector<std::vector<uint32_t>> sub_hist_;  // per thread: sub-bucket counts per bucket
  std::vector<uint32_t> starts_;                 // bucket starts (+ end) of the current partition
  std::atomic<std::size_t> next_bucket_{0};
  std::atomic<uint64_t> candidates_{0};
};

}  // namespace batch_pass

using batch_pass::batch_run;

}  // namespace simdup::detail
