// The online index: segments under a reader-writer lock, with sealing, tiered merging and
// expiry done by the inserting thread outside that lock (readers keep going meanwhile).
#include <simdup/online_index.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "index/index_file.hpp"
#include "index/segment.hpp"

namespace simdup {

struct online_index::impl {
  online_index_options options;
  index_layout layout;
  std::vector<detail::table_perm> tables;
  detail::probe_context ctx{};

  /// Guards the segment lists, the mutable segments' contents and all deletion bits.
  mutable std::shared_mutex mutex;
  /// One sealing/merging/removal/expiry/save at a time. While it is held the sealed list
  /// changes only by its holder, so the holder can read sealed segments without `mutex`.
  mutable std::mutex maintenance;
  std::vector<std::shared_ptr<detail::sealed_segment>> sealed;   // oldest first
  std::vector<std::shared_ptr<detail::mutable_segment>> frozen;  // full, awaiting sealing
  std::shared_ptr<detail::mutable_segment> active;
  /// Capacity of the next mutable segment. With the automatic capacity it starts small and
  /// doubles up to options.segment_capacity, so that an empty or small index holds a few hundred
  /// kilobytes instead of a full segment's chains (about 8 MB).
  std::size_t next_capacity = 0;
  uint64_t expired = 0, removed = 0;
  int64_t newest_ts = INT64_MIN;
  /// Ids given to remove_deferred and not yet applied (under `mutex`; appended only, applied
  /// from the front under `maintenance`): queries skip their entries meanwhile.
  std::vector<uint64_t> pending_removals;
  /// How often each id is in pending_removals (under `mutex`), so that a query's matches are
  /// checked in constant time however many removals wait behind a long merge.
  std::unordered_map<uint64_t, uint32_t> pending_count;

  /// Drops matches of ids whose removal waits. Caller holds `mutex` (shared or exclusive).
  void drop_pending(std::vector<index_match>& out) const {
    if (pending_count.empty()) return;
    std::erase_if(out, [&](const index_match& m) { return pending_count.contains(m.id); });
  }

  /// Takes one occurrence of `id` off pending_count. Caller holds `mutex` exclusively.
  void uncount_pending(uint64_t id) {
    const auto it = pending_count.find(id);
    if (it != pending_count.end() && --it->second == 0) pending_count.erase(it);
  }

  /// Marks every entry with these ids removed; with `applied`, also drops that many ids from
  /// the front of pending_removals in the same exclusive section. Caller holds `maintenance`
  /// (not `mutex`).
  std::size_t remove_locked(std::span<const uint64_t> ids, std::size_t applied = 0) {
    // Sealed segments are found through their id tables under `maintenance` alone (it freezes
    // the sealed list and its deletion bits), so queries go on while a table is first built;
    // only the marking takes the exclusive lock.
    std::vector<uint32_t> hits;
    std::vector<std::size_t> ends;  // hits of sealed segment i end at ends[i]
    ends.reserve(sealed.size());
    for (auto& s : sealed) {
      for (uint64_t id : ids) s->find_id(id, hits);
      ends.push_back(hits.size());
    }
    std::unique_lock lock(mutex);
    std::size_t count = hits.size(), begin = 0;
    for (std::size_t i = 0; i < sealed.size(); ++i) {
      sealed[i]->mark_deleted(std::span(hits).subspan(begin, ends[i] - begin));
      begin = ends[i];
    }
    for (uint64_t id : ids) {
      for (auto& f : frozen) count += f->remove(id);
      count += active->remove(id);
    }
    removed += count;
    // Only these are dropped: others may have been appended meanwhile.
    for (std::size_t i = 0; i < applied; ++i) uncount_pending(pending_removals[i]);
    pending_removals.erase(pending_removals.begin(),
                           pending_removals.begin() + static_cast<std::ptrdiff_t>(applied));
    return count;
  }

  /// Applies the removals remove_deferred left. Caller holds `maintenance` (not `mutex`).
  void apply_pending_removals() {
    std::vector<uint64_t> ids;
    {
      std::shared_lock lock(mutex);
      ids = pending_removals;
    }
    if (!ids.empty()) remove_locked(ids, ids.size());
  }

  void init_tables() {
    tables = detail::build_tables(layout);
    int min_prefix = 64;
    for (const auto& t : tables) min_prefix = std::min(min_prefix, t.prefix_bits);
    ctx = detail::probe_context{&tables, min_prefix};
    next_capacity = options.segment_capacity;
    if (options.segment_capacity == 0) {
      // A mutable entry costs 12 bytes per table (chain link, bucket head share); keep the
      // segment near 8 MB so that many-table layouts (k = 8: 45 to 495 tables) stay small.
      options.segment_capacity =
          std::clamp<std::size_t>(655360 / std::max<std::size_t>(tables.size(), 1), 1024, 65536);
      next_capacity = std::min<std::size_t>(options.segment_capacity, 1024);
    }
    active = new_active();
  }

  /// A mutable segment of next_capacity entries; the one after it gets twice as many, up to
  /// options.segment_capacity.
  std::shared_ptr<detail::mutable_segment> new_active() {
    const std::size_t capacity = next_capacity;
    next_capacity = std::min(options.segment_capacity, next_capacity * 2);
    return std::make_shared<detail::mutable_segment>(ctx, capacity);
  }

  int64_t now_of(int64_t now) const {
    if (now != use_clock) return now;
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// Oldest live timestamp at `now` (INT64_MIN without a window).
  int64_t min_live(int64_t now) const {
    if (options.window <= 0) return INT64_MIN;
    if (now < INT64_MIN + options.window) return INT64_MIN;
    return now - options.window + 1;
  }

  detail::probe_params params(const query_params& q) const {
    const int k = (q.k < 0 || q.k > layout.k) ? layout.k : q.k;
    return {k, options.window > 0 ? min_live(now_of(q.now)) : INT64_MIN};
  }

  /// Caller holds `mutex` (shared or exclusive).
  void probe_all(uint64_t q, const detail::probe_params& p, std::vector<index_match>& out) const {
    for (const auto& s : sealed) s->probe(ctx, q, p, out);
    for (const auto& f : frozen) f->probe(ctx, q, p, out);
    active->probe(ctx, q, p, out);
    drop_pending(out);
  }

  /// Caller holds `mutex` exclusively. Returns true when a segment was frozen (needs sealing).
  bool insert_locked(const index_entry& e) {
    bool froze = false;
    if (active->full()) {
      frozen.push_back(std::move(active));
      active = new_active();
      froze = true;
    }
    active->insert(ctx, e);
    newest_ts = std::max(newest_ts, e.timestamp);
    return froze;
  }

  /// Time span a merged segment may cover (0: no limit).
  int64_t span_limit() const {
    return options.window > 0 ? std::max<int64_t>(1, options.window / 4) : 0;
  }

  std::size_t tier(std::size_t size) const {
    std::size_t t = 0;
    for (std::size_t s = options.segment_capacity; s < size; s *= options.merge_fanout) ++t;
    return t;
  }

  /// Merges sealed[first, last) into one; caller holds `maintenance`.
  void merge_range(std::size_t first, std::size_t last, int64_t min_live_ts) {
    auto merged = detail::sealed_segment::merge(ctx, std::span(sealed).subspan(first, last - first),
                                                min_live_ts);
    std::unique_lock lock(mutex);
    for (std::size_t i = first; i < last; ++i)
      expired += sealed[i]->live();  // counted back below: only the window-dropped ones remain
    expired -= merged->size();
    sealed.erase(sealed.begin() + static_cast<std::ptrdiff_t>(first),
                 sealed.begin() + static_cast<std::ptrdiff_t>(last));
    sealed.insert(sealed.begin() + static_cast<std::ptrdiff_t>(first), std::move(merged));
  }

  std::size_t live_of(std::size_t first, std::size_t last) const {
    std::size_t live = 0;
    for (std::size_t i = first; i < last; ++i) live += sealed[i]->live();
    return live;
  }

  /// Largest segment a merge may build now (see online_index_options::merge_cap_divisor).
  /// Caller holds `maintenance`.
  std::size_t merge_cap() const {
    if (options.merge_cap_divisor == 0) return SIZE_MAX;
    std::size_t live = live_of(0, sealed.size());
    {
      std::shared_lock lock(mutex);
      for (const auto& f : frozen) live += f->live();
      live += active->live();
    }
    return std::max(live / options.merge_cap_divisor, options.merge_cap_floor);
  }

  /// Merges the newest run of merge_fanout adjacent sealed segments of one tier whose merge
  /// fits `cap` and the span limit. Runs below the newest one exist when the cap held them
  /// back while the index was smaller. Returns false when there is none. Caller holds
  /// `maintenance`.
  bool merge_tier_run(std::size_t cap, int64_t min_live_ts) {
    const std::size_t fan = options.merge_fanout;
    for (std::size_t last = sealed.size(); last >= fan; --last) {
      const std::size_t first = last - fan;
      const std::size_t t = tier(sealed[first]->live());
      bool same = true;
      for (std::size_t i = first + 1; i < last; ++i) same &= tier(sealed[i]->live()) == t;
      if (!same || live_of(first, last) > cap || !span_ok(first, last)) continue;
      merge_range(first, last, min_live_ts);
      return true;
    }
    return false;
  }

  bool span_ok(std::size_t first, std::size_t last) const {
    if (span_limit() == 0) return true;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t i = first; i < last; ++i) {
      lo = std::min(lo, sealed[i]->min_ts());
      hi = std::max(hi, sealed[i]->max_ts());
    }
    return hi - lo <= span_limit() || hi < lo;
  }

  /// Caller holds `maintenance`.
  std::size_t expire_locked(int64_t now) {
    if (options.window <= 0) return 0;
    const int64_t cutoff = min_live(now);
    std::unique_lock lock(mutex);
    std::size_t dropped = 0;
    std::erase_if(sealed, [&](const std::shared_ptr<detail::sealed_segment>& s) {
      if (s->size() == 0 || s->max_ts() >= cutoff) return false;
      dropped += s->live();
      return true;
    });
    expired += dropped;
    return dropped;
  }

  /// The newest timestamp inserted so far (INT64_MIN before the first insert).
  int64_t newest_inserted() const {
    std::shared_lock lock(mutex);
    return newest_ts;
  }

  /// Seals frozen segments, merges by tier, expires. Caller holds no lock.
  void maintain() {
    std::lock_guard guard(maintenance);
    apply_pending_removals();
    const int64_t newest = newest_inserted();
    const int64_t min_live_ts = min_live(newest);
    while (true) {
      std::shared_ptr<detail::mutable_segment> f;
      {
        std::shared_lock lock(mutex);
        if (frozen.empty()) break;
        f = frozen.front();
      }
      detail::entry_columns cols;
      cols.reserve(f->live());
      f->collect(cols, INT64_MIN);
      auto s = detail::sealed_segment::build(ctx, cols);
      {
        std::unique_lock lock(mutex);
        frozen.erase(frozen.begin());
        sealed.push_back(std::move(s));
      }
      // Merging after each seal keeps tiers in order (largest oldest) even when one insert
      // call froze several segments.
      const std::size_t cap = merge_cap();
      while (merge_tier_run(cap, min_live_ts)) {
      }
    }
    if (newest != INT64_MIN) expire_locked(newest);
    // Removals that came while merging: the merged segments still hold their entries.
    apply_pending_removals();
  }

  void compact() {
    {
      std::unique_lock lock(mutex);
      if (active->size() > 0) {
        frozen.push_back(std::move(active));
        active = new_active();
      }
    }
    maintain();
    std::lock_guard guard(maintenance);
    const int64_t newest = newest_inserted();
    const int64_t min_live_ts = min_live(newest);
    // Greedy from the oldest: merge each maximal run whose time span fits the limit. The merge
    // cap does not apply: compact() is asked for, when fewer probes are worth the memory.
    for (std::size_t first = 0; first < sealed.size(); ++first) {
      std::size_t last = first + 1;
      while (last < sealed.size() && span_ok(first, last + 1)) ++last;
      if (last - first >= 2 || sealed[first]->live() != sealed[first]->size())
        merge_range(first, last, min_live_ts);
    }
  }
};

online_index::online_index(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
online_index::online_index(online_index&&) noexcept = default;
online_index& online_index::operator=(online_index&&) noexcept = default;
online_index::~online_index() = default;

namespace {

status check_options(const online_index_options& o) {
  if (o.segment_capacity >= UINT32_MAX)
    return make_error(errc::invalid_argument, "segment_capacity must be below 2^32 - 1");
  if (o.merge_fanout < 2)
    return make_error(errc::invalid_argument, "merge_fanout must be at least 2");
  if (o.merge_cap_floor < 1)
    return make_error(errc::invalid_argument, "merge_cap_floor must be at least 1");
  if (o.window < 0) return make_error(errc::invalid_argument, "window must not be negative");
  return {};
}

}  // namespace

result<online_index> online_index::create(online_index_options options) {
  if (status s = check_options(options); !s) return s.error();
  auto p = std::make_unique<impl>();
  if (options.layout.widths.empty()) {
    auto plan = make_plan({.n = options.expected_size,
                           .k = options.layout.k,
                           .memory = options.memory,
                           .purpose = plan_purpose::online});
    if (!plan) return std::move(plan).error();
    p->layout = plan->layout;
  } else {
    if (status s = options.layout.validate(); !s) return s.error();
    p->layout = options.layout;
  }
  p->options = std::move(options);
  p->init_tables();
  return online_index(std::move(p));
}

result<online_index> online_index::load(const std::string& path, online_index_options options) {
  if (status s = check_options(options); !s) return s.error();
  auto p = std::make_unique<impl>();
  p->options = std::move(options);
  auto file = detail::read_index_file(path);
  if (!file) return std::move(file).error();
  p->layout = file->layout;
  p->init_tables();
  for (auto& seg : file->segments) {
    auto s = detail::sealed_segment::adopt(p->ctx, seg.words, std::move(seg.deleted), file->owner);
    if (!s)
      return make_error(errc::corrupt_data, path + ": segment " + std::to_string(p->sealed.size()) +
                                                " is inconsistent");
    if (s->size()) p->newest_ts = std::max(p->newest_ts, s->max_ts());
    p->sealed.push_back(std::move(s));
  }
  p->expired = file->expired;
  p->removed = file->removed;
  return online_index(std::move(p));
}

void online_index::insert(const index_entry& entry) {
  insert(std::span(&entry, 1));
}

void online_index::insert(std::span<const index_entry> entries) {
  bool froze = false;
  {
    std::unique_lock lock(impl_->mutex);
    for (const auto& e : entries) froze |= impl_->insert_locked(e);
  }
  if (froze && impl_->options.maintain_on_insert) impl_->maintain();
}

void online_index::maintain() {
  impl_->maintain();
}

std::size_t online_index::awaiting_maintenance() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->frozen.size() + (impl_->pending_removals.empty() ? 0 : 1);
}

std::vector<index_match> online_index::query(uint64_t fingerprint,
                                             const query_params& params) const {
  const auto p = impl_->params(params);
  std::vector<index_match> out;
  {
    std::shared_lock lock(impl_->mutex);
    impl_->probe_all(fingerprint, p, out);
  }
  std::sort(out.begin(), out.end(), [](const index_match& a, const index_match& b) {
    return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
  });
  return out;
}

void online_index::query(std::span<const uint64_t> fingerprints, query_results& out,
                         const query_params& params) const {
  const auto p = impl_->params(params);
  std::vector<std::vector<index_match>> per(fingerprints.size());
  {
    std::shared_lock lock(impl_->mutex);
    for (const auto& s : impl_->sealed) s->probe_batch(impl_->ctx, fingerprints, p, per);
    for (const auto& f : impl_->frozen) f->probe_batch(impl_->ctx, fingerprints, p, per);
    impl_->active->probe_batch(impl_->ctx, fingerprints, p, per);
    for (auto& m : per) impl_->drop_pending(m);
  }
  out.matches.clear();
  out.offsets.assign(1, 0);
  for (auto& m : per) {
    std::sort(m.begin(), m.end(), [](const index_match& a, const index_match& b) {
      return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
    });
    out.matches.insert(out.matches.end(), m.begin(), m.end());
    out.offsets.push_back(out.matches.size());
  }
}

std::vector<index_match> online_index::check_insert(const index_entry& entry,
                                                    const query_params& params) {
  const auto p = impl_->params(params);
  std::vector<index_match> out;
  bool froze = false;
  {
    std::unique_lock lock(impl_->mutex);
    impl_->probe_all(entry.fingerprint, p, out);
    if (out.empty()) froze = impl_->insert_locked(entry);
  }
  if (froze && impl_->options.maintain_on_insert) impl_->maintain();
  std::sort(out.begin(), out.end(), [](const index_match& a, const index_match& b) {
    return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
  });
  return out;
}

std::size_t online_index::remove(uint64_t id) {
  std::lock_guard guard(impl_->maintenance);
  impl_->apply_pending_removals();
  return impl_->remove_locked(std::span(&id, 1));
}

void online_index::remove_deferred(uint64_t id) {
  std::unique_lock lock(impl_->mutex);
  impl_->pending_removals.push_back(id);
  ++impl_->pending_count[id];
}

bool online_index::cancel_removal(uint64_t id) {
  std::lock_guard guard(impl_->maintenance);
  std::unique_lock lock(impl_->mutex);
  auto& p = impl_->pending_removals;
  const auto it = std::find(p.begin(), p.end(), id);
  if (it == p.end()) return false;
  p.erase(it);
  impl_->uncount_pending(id);
  return true;
}

std::size_t online_index::expire(int64_t now) {
  const int64_t t = impl_->now_of(now);
  std::lock_guard guard(impl_->maintenance);
  return impl_->expire_locked(t);
}

void online_index::compact() {
  impl_->compact();
}

index_stats online_index::stats() const {
  std::shared_lock lock(impl_->mutex);
  index_stats s;
  for (const auto& x : impl_->sealed) {
    s.size += x->live();
    s.memory_bytes += x->memory_bytes();
    s.largest_segment = std::max<uint64_t>(s.largest_segment, x->size());
  }
  for (const auto& f : impl_->frozen) {
    s.size += f->live();
    s.memory_bytes += f->memory_bytes();
  }
  s.size += impl_->active->live();
  s.memory_bytes += impl_->active->memory_bytes();
  s.sealed_segments = impl_->sealed.size();
  s.segments = s.sealed_segments + impl_->frozen.size() + 1;
  s.expired = impl_->expired;
  s.removed = impl_->removed;
  return s;
}

const index_layout& online_index::layout() const noexcept {
  return impl_->layout;
}

status online_index::save(const std::string& path) const {
  // Holding `maintenance` freezes the sealed list and all deletion bits; the unsealed segments
  // are sealed into temporary copies under a short shared lock.
  std::lock_guard guard(impl_->maintenance);
  impl_->apply_pending_removals();
  std::vector<std::shared_ptr<detail::sealed_segment>> segs;
  uint64_t expired, removed;
  {
    std::shared_lock lock(impl_->mutex);
    segs = impl_->sealed;
    detail::entry_columns cols;
    for (const auto& f : impl_->frozen) f->collect(cols, INT64_MIN);
    impl_->active->collect(cols, INT64_MIN);
    if (cols.size()) segs.push_back(detail::sealed_segment::build(impl_->ctx, cols));
    expired = impl_->expired;
    removed = impl_->removed;
  }
  return detail::write_index_file(path, impl_->layout, segs, expired, removed);
}

}  // namespace simdup
