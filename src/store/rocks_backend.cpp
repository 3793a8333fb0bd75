// Embedded RocksDB backend: RocksDB is the durable log and source of truth; each collection has
// an in-memory online_index (simdup/online_index.hpp) rebuilt from it at start, in time order.
//
// Keys (one column family; numbers big endian so they sort):
//   c \0 <collection>                   -> collection settings (JSON)
//   d \0 <collection> \0 <id>           -> fingerprint, time, number (3 x 8 bytes, little endian)
//   n \0 <collection> \0 <number>       -> id
//   t \0 <collection> \0 <time><number> -> fingerprint (8 bytes, little endian) + id; time order
//                                          for the rebuild and for expiry
//
// Documents are numbered per collection; the index holds (fingerprint, number, time) only, so
// its memory does not grow with id lengths, and ids are looked up for matches.
//
// Concurrency of check-insert: a request probes the index for its whole batch without the
// collection lock (the index serves queries while others insert), then takes the lock and
// checks only what the probe cannot have seen: the entries inserted since (kept in a short
// in-memory list, numbered in insert order) and the earlier documents of its own batch. If a
// document was removed meanwhile, or the list no longer reaches back far enough, it probes the
// index again under the lock. So the check and the insert stay one atomic step, while most of
// the probing runs in parallel with other writers.
//
// Durability: a request's changes are written to the WAL (unsynced) while the collection lock
// is held, so the log order is the order the index saw; the lock is then released and the
// request waits for a group commit that fsyncs the WAL for every writer queued behind it. The
// answer is sent only after that.
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <unordered_map>

#include <simdup/online_index.hpp>
#include <simdup/simhash.hpp>
#include "store/backend.hpp"

namespace simdup::detail {
namespace {

std::string prefix(char tag, std::string_view collection) {
  std::string k;
  k.push_back(tag);
  k.push_back('\0');
  k.append(collection);
  k.push_back('\0');
  return k;
}

std::string doc_key(std::string_view collection, std::string_view id) {
  return prefix('d', collection).append(id);
}

void append_be(std::string& k, uint64_t v) {
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t read_be(std::string_view s) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

std::string num_key(std::string_view collection, uint64_t num) {
  std::string k = prefix('n', collection);
  append_be(k, num);
  return k;
}

/// Times are signed: the sign bit is flipped so that byte order is numeric order.
constexpr uint64_t time_bias = uint64_t{1} << 63;

std::string time_key(std::string_view collection, int64_t time, uint64_t num) {
  std::string k = prefix('t', collection);
  append_be(k, static_cast<uint64_t>(time) ^ time_bias);
  append_be(k, num);
  return k;
}

std::string time_value(uint64_t fingerprint, std::string_view id) {
  std::string v(8, '\0');
  std::memcpy(v.data(), &fingerprint, 8);
  v.append(id);
  return v;
}

struct doc_value {
  uint64_t fingerprint;
  int64_t time;
  uint64_t num;
};

std::string encode(const doc_value& v) {
  std::string out(24, '\0');
  std::memcpy(out.data(), &v.fingerprint, 8);
  std::memcpy(out.data() + 8, &v.time, 8);
  std::memcpy(out.data() + 16, &v.num, 8);
  return out;
}

bool decode(std::string_view s, doc_value& v) {
  if (s.size() != 24) return false;
  std::memcpy(&v.fingerprint, s.data(), 8);
  std::memcpy(&v.time, s.data() + 8, 8);
  std::memcpy(&v.num, s.data() + 16, 8);
  return true;
}

error_info db_error(const char* what, const rocksdb::Status& s) {
  return make_error(errc::io_error, std::string("rocksdb ") + what + ": " + s.ToString());
}

online_index_options index_options(const collection_config& c) {
  online_index_options o;
  o.k = c.k;
  o.layout.k = c.k;
  o.window = c.window_s;
  return o;
}

struct collection_state {
  collection_state(collection_config c, online_index i)
      : config(std::move(c)), index(std::move(i)) {}
  collection_config config;
  /// Serialises changes (the index allows concurrent queries, but check-insert, the WAL order
  /// and replacing an id must be one step).
  std::mutex mu;
  online_index index;
  uint64_t next_num = 1;
  /// Every entry numbered below this is in the index (published after the inserts, under mu).
  std::atomic<uint64_t> published{1};
  /// Counts removals from the index (under mu): a probe made before one may hold a stale match.
  std::atomic<uint64_t> removals{0};
  /// The most recent inserts, in number order (under mu), for the re-check after a lock-free
  /// probe; bounded by max_recent.
  std::deque<index_entry> recent;
  std::atomic<uint64_t> documents{0}, inserted{0}, expired{0}, deleted{0};
};

/// Entries kept for re-checks: enough for the inserts of many concurrent batch requests.
constexpr std::size_t max_recent = 65536;

result<std::unique_ptr<collection_state>> make_state(const collection_config& config) {
  auto index = online_index::create(index_options(config));
  if (!index) return std::move(index).error();
  return std::make_unique<collection_state>(config, std::move(*index));
}

class rocks_backend final : public backend {
 public:
  explicit rocks_backend(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}

  ~rocks_backend() override {
    // Make everything written durable before closing (expiry deletes are written unsynced).
    (void)db_->SyncWAL();
    (void)db_->Close();
  }

  status load() {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    const std::string cprefix = prefix('c', "").substr(0, 2);
    for (it->Seek(cprefix); it->Valid() && it->key().starts_with(cprefix); it->Next()) {
      collection_config base;
      base.name = it->key().ToString().substr(2);
      auto config = config_from_json(it->value().ToStringView(), base);
      if (!config) {
        return make_error(errc::corrupt_data, "stored settings of collection \"" + base.name +
                                                  "\": " + config.error().message);
      }
      auto state = make_state(*config);
      if (!state) return std::move(state).error();
      if (auto st = load_documents(**state); !st) return st;
      collections_.emplace(config->name, std::move(*state));
    }
    if (!it->status().ok()) return db_error("scan", it->status());
    return {};
  }

  result<std::vector<collection_config>> collections() override {
    std::shared_lock lock(collections_mu_);
    std::vector<collection_config> out;
    for (const auto& [name, state] : collections_) out.push_back(state->config);
    return out;
  }

  status create(const collection_config& config) override {
    if (auto st = validate(config); !st) return st;
    std::unique_lock lock(collections_mu_);
    if (auto it = collections_.find(config.name); it != collections_.end()) {
      if (to_json(it->second->config) == to_json(config)) return {};
      return make_error(errc::invalid_argument,
                        "collection \"" + config.name +
                            "\" exists with other settings: " + to_json(it->second->config));
    }
    auto state = make_state(config);
    if (!state) return std::move(state).error();
    rocksdb::WriteOptions wo;
    wo.sync = true;
    auto s = db_->Put(wo, prefix('c', "").substr(0, 2) + config.name, to_json(config));
    if (!s.ok()) return db_error("put", s);
    collections_.emplace(config.name, std::move(*state));
    return {};
  }

  status apply(const collection_config& config, doc_op op, std::span<const doc_input> docs,
               int64_t now, std::size_t max_matches, std::span<doc_outcome> out) override {
    (void)now;  // the window is measured from each document's own time
    auto found = find(config.name);
    if (!found) return std::move(found).error();
    collection_state& c = **found;
    for (auto& o : out) o = doc_outcome{};
    // Snapshot before the probe: entries numbered from here on may be missing from it.
    const uint64_t probed_num = c.published.load(std::memory_order_acquire);
    const uint64_t probed_removals = c.removals.load(std::memory_order_acquire);
    // Plain inserts report nothing, so they need no probe.
    std::vector<std::vector<index_match>> hits =
        op == doc_op::insert ? std::vector<std::vector<index_match>>(docs.size()) : probe(c, docs);
    if (op == doc_op::check) return resolve_all(c, hits, max_matches, out);
    uint64_t seq = 0;
    {
      std::lock_guard lock(c.mu);
      rocksdb::WriteBatch batch;
      std::vector<undo_step> undo;
      // Ids inserted earlier in this request: not in the database until the batch is written.
      std::unordered_map<std::string_view, doc_value> pending;
      for (std::size_t i = 0; i < docs.size(); ++i) {
        if (op == doc_op::check_insert) {
          // Under the collection lock nothing is inserted between this check and the insert.
          recheck_locked(c, docs[i], probed_num, probed_removals, hits[i]);
          if (!hits[i].empty()) continue;
        }
        if (auto st = insert_locked(c, docs[i], pending, batch, undo); !st) {
          rollback(c, undo);
          return st;
        }
        out[i].inserted = true;
      }
      c.published.store(c.next_num, std::memory_order_release);
      if (batch.Count() > 0) {
        auto s = db_->Write(rocksdb::WriteOptions(), &batch);
        if (!s.ok()) {
          rollback(c, undo);
          return db_error("write", s);
        }
        seq = db_->GetLatestSequenceNumber();
        std::size_t replaced = 0;
        for (const auto& u : undo) replaced += u.replaced ? 1 : 0;
        c.inserted += undo.size();
        c.documents += undo.size() - replaced;
      }
    }
    if (seq != 0) {
      if (auto st = wait_durable(seq); !st) return st;
    }
    return resolve_all(c, hits, max_matches, out);
  }

  result<bool> remove(const collection_config& config, const std::string& id) override {
    auto found = find(config.name);
    if (!found) return std::move(found).error();
    collection_state& c = **found;
    uint64_t seq;
    {
      std::lock_guard lock(c.mu);
      std::string raw;
      auto s = db_->Get(rocksdb::ReadOptions(), doc_key(c.config.name, id), &raw);
      if (s.IsNotFound()) return false;
      if (!s.ok()) return db_error("get", s);
      doc_value v;
      if (!decode(raw, v)) return make_error(errc::corrupt_data, "stored document " + id);
      rocksdb::WriteBatch batch;
      batch.Delete(doc_key(c.config.name, id));
      batch.Delete(num_key(c.config.name, v.num));
      batch.Delete(time_key(c.config.name, v.time, v.num));
      s = db_->Write(rocksdb::WriteOptions(), &batch);
      if (!s.ok()) return db_error("write", s);
      c.removals.fetch_add(1, std::memory_order_release);
      c.index.remove(v.num);
      seq = db_->GetLatestSequenceNumber();
      --c.documents;
    }
    if (auto st = wait_durable(seq); !st) return std::move(st).error();
    ++c.deleted;
    return true;
  }

  status expire(const collection_config& config, int64_t now) override {
    if (config.window_s <= 0) return {};
    auto found = find(config.name);
    if (!found) return std::move(found).error();
    collection_state& c = **found;
    // The index drops whole segments (its queries already skip entries out of the window); the
    // store drops every document that is no longer live (time + window <= now), oldest first,
    // in bounded steps so writers are not held up long. Matches whose document is gone from the
    // store are not reported.
    c.index.expire(now);
    const std::string first = prefix('t', c.config.name);
    const std::string end = time_key(c.config.name, now - config.window_s + 1, 0);
    for (;;) {
      std::lock_guard lock(c.mu);
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
      rocksdb::WriteBatch batch;
      std::size_t n = 0;
      for (it->Seek(first); it->Valid() && it->key().compare(end) < 0 && n < 10000; it->Next()) {
        const std::string_view key = it->key().ToStringView();
        const std::string_view value = it->value().ToStringView();
        if (value.size() < 8 || key.size() != first.size() + 16) {
          return make_error(errc::corrupt_data, "stored time key of collection " + config.name);
        }
        const uint64_t num = read_be(key.substr(first.size() + 8));
        const std::string_view id = value.substr(8);
        batch.Delete(it->key());
        batch.Delete(num_key(c.config.name, num));
        batch.Delete(doc_key(c.config.name, id));
        ++n;
      }
      if (!it->status().ok()) return db_error("scan", it->status());
      if (n == 0) return {};
      // Unsynced: after a crash, documents whose deletion was lost are simply expired again.
      auto s = db_->Write(rocksdb::WriteOptions(), &batch);
      if (!s.ok()) return db_error("write", s);
      c.expired += n;
      c.documents -= n;
    }
  }

  result<collection_stats> stats(const collection_config& config) override {
    auto found = find(config.name);
    if (!found) return std::move(found).error();
    collection_state& c = **found;
    collection_stats st;
    st.documents = c.documents;
    st.inserted = c.inserted;
    st.expired = c.expired;
    st.deleted = c.deleted;
    st.index_bytes = c.index.stats().memory_bytes;
    return st;
  }

 private:
  struct undo_step {
    uint64_t inserted_num;  ///< to remove from the index
    int64_t inserted_time;
    bool replaced;  ///< an older document with the same id was removed: restore it
    doc_value old;
  };

  result<collection_state*> find(const std::string& name) {
    std::shared_lock lock(collections_mu_);
    auto it = collections_.find(name);
    if (it == collections_.end()) {
      return make_error(errc::not_found, "no collection \"" + name + "\"");
    }
    return it->second.get();
  }

  static std::vector<index_match> query(const collection_state& c, const doc_input& d) {
    query_params params;
    params.now = d.time;  // live: time + window > the document's time
    return c.index.query(d.fingerprint, params);
  }

  static bool live(const collection_state& c, int64_t timestamp, int64_t now) {
    return c.config.window_s <= 0 || timestamp + c.config.window_s > now;
  }

  static bool match_order(const index_match& a, const index_match& b) {
    return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
  }

  /// One batch probe for all documents (interleaved probes), then each document's own window.
  static std::vector<std::vector<index_match>> probe(const collection_state& c,
                                                     std::span<const doc_input> docs) {
    std::vector<std::vector<index_match>> hits(docs.size());
    if (docs.empty()) return hits;
    std::vector<uint64_t> fps(docs.size());
    query_params params;
    params.now = docs[0].time;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      fps[i] = docs[i].fingerprint;
      // The earliest time admits every entry live for some document; filtered per document.
      params.now = std::min(params.now, docs[i].time);
    }
    query_results results;
    c.index.query(fps, results, params);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      for (const index_match& m : results[i]) {
        if (live(c, m.timestamp, docs[i].time)) hits[i].push_back(m);
      }
    }
    return hits;
  }

  /// Completes a probe made without the lock: adds the entries inserted since (numbered from
  /// probed_num on), or probes again if something was removed or the list is too short.
  static void recheck_locked(const collection_state& c, const doc_input& d, uint64_t probed_num,
                             uint64_t probed_removals, std::vector<index_match>& hits) {
    const bool complete =
        probed_num >= c.next_num || (!c.recent.empty() && c.recent.front().id <= probed_num);
    if (c.removals.load(std::memory_order_relaxed) != probed_removals || !complete) {
      hits = query(c, d);
      return;
    }
    auto it = std::lower_bound(c.recent.begin(), c.recent.end(), probed_num,
                               [](const index_entry& e, uint64_t num) { return e.id < num; });
    const std::size_t before = hits.size();
    for (; it != c.recent.end(); ++it) {
      const int distance = hamming_distance(it->fingerprint, d.fingerprint);
      // An entry inserted between the snapshot and the probe may be in both.
      const auto seen = [&](const index_match& m) { return m.id == it->id; };
      if (distance <= c.config.k && live(c, it->timestamp, d.time) &&
          std::none_of(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(before), seen)) {
        hits.push_back(index_match{it->id, it->fingerprint, it->timestamp, distance});
      }
    }
    if (hits.size() != before) std::sort(hits.begin(), hits.end(), match_order);
  }

  /// Rebuilds the index from the time-ordered keys, so segments come out in time order.
  status load_documents(collection_state& c) {
    const std::string p = prefix('t', c.config.name);
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
    std::vector<index_entry> entries;
    uint64_t count = 0;
    for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      const std::string_view value = it->value().ToStringView();
      if (value.size() < 8 || key.size() != p.size() + 16) {
        return make_error(errc::corrupt_data, "stored time key of collection " + c.config.name);
      }
      index_entry e;
      e.timestamp = static_cast<int64_t>(read_be(key.substr(p.size())) ^ time_bias);
      e.id = read_be(key.substr(p.size() + 8));
      std::memcpy(&e.fingerprint, value.data(), 8);
      entries.push_back(e);
      c.next_num = std::max(c.next_num, e.id + 1);
      ++count;
      if (entries.size() == 65536) {
        c.index.insert(entries);
        entries.clear();
      }
    }
    if (!it->status().ok()) return db_error("scan", it->status());
    c.index.insert(entries);
    // A bulk rebuild leaves many small sealed segments; fewer segments mean fewer probes.
    c.index.compact();
    c.documents = count;
    c.published = c.next_num;
    return {};
  }

  status insert_locked(collection_state& c, const doc_input& d,
                       std::unordered_map<std::string_view, doc_value>& pending,
                       rocksdb::WriteBatch& batch, std::vector<undo_step>& undo) {
    undo_step step{c.next_num, d.time, false, {}};
    if (auto p = pending.find(d.id); p != pending.end()) {
      step.replaced = true;
      step.old = p->second;
    } else {
      std::string raw;
      auto s = db_->Get(rocksdb::ReadOptions(), doc_key(c.config.name, d.id), &raw);
      if (s.ok()) {
        if (!decode(raw, step.old))
          return make_error(errc::corrupt_data, "stored document " + d.id);
        step.replaced = true;
      } else if (!s.IsNotFound()) {
        return db_error("get", s);
      }
    }
    if (step.replaced) {
      // Re-sending an id replaces its document (rare: a scan of the index).
      c.removals.fetch_add(1, std::memory_order_release);
      c.index.remove(step.old.num);
      batch.Delete(num_key(c.config.name, step.old.num));
      batch.Delete(time_key(c.config.name, step.old.time, step.old.num));
    }
    const doc_value v{d.fingerprint, d.time, c.next_num++};
    c.index.insert(index_entry{v.fingerprint, v.num, v.time});
    c.recent.push_back(index_entry{v.fingerprint, v.num, v.time});
    if (c.recent.size() > max_recent) c.recent.pop_front();
    batch.Put(doc_key(c.config.name, d.id), encode(v));
    batch.Put(num_key(c.config.name, v.num), d.id);
    batch.Put(time_key(c.config.name, v.time, v.num), time_value(v.fingerprint, d.id));
    pending[d.id] = v;
    undo.push_back(step);
    return {};
  }

  static void rollback(collection_state& c, std::vector<undo_step>& undo) {
    c.removals.fetch_add(1, std::memory_order_release);
    // The undone inserts are the newest entries of the list.
    while (!c.recent.empty() && c.recent.back().id >= c.next_num - undo.size()) c.recent.pop_back();
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      c.index.remove(it->inserted_num);
      if (it->replaced) c.index.insert(index_entry{it->old.fingerprint, it->old.num, it->old.time});
    }
  }
  /// Group commit: one writer at a time fsyncs the WAL up to the newest sequence number; the
  /// writers that queued meanwhile are covered by the next sync.
  status wait_durable(uint64_t seq) {
    std::unique_lock lock(sync_mu_);
    while (synced_ < seq) {
      if (syncing_) {
        sync_cv_.wait(lock);
        continue;
      }
      syncing_ = true;
      // Every write numbered up to `target` has reached the WAL file before its number was
      // published, so one fsync now covers all of them.
      const uint64_t target = db_->GetLatestSequenceNumber();
      lock.unlock();
      const auto s = db_->SyncWAL();
      lock.lock();
      syncing_ = false;
      sync_cv_.notify_all();
      if (!s.ok()) return db_error("sync", s);
      synced_ = std::max(synced_, target);
    }
    return {};
  }

  status resolve_all(const collection_state& c, std::vector<std::vector<index_match>>& hits,
                     std::size_t max_matches, std::span<doc_outcome> out) {
    for (std::size_t i = 0; i < hits.size(); ++i) {
      // The index sorts by (distance, time, number); ties beyond distance keep that order.
      for (const index_match& h : hits[i]) {
        if (out[i].matches.size() >= max_matches) break;
        std::string id;
        auto s = db_->Get(rocksdb::ReadOptions(), num_key(c.config.name, h.id), &id);
        if (s.IsNotFound()) continue;  // deleted since the lookup
        if (!s.ok()) return db_error("get", s);
        out[i].matches.push_back({std::move(id), h.distance});
      }
    }
    return {};
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::shared_mutex collections_mu_;
  std::map<std::string, std::unique_ptr<collection_state>, std::less<>> collections_;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  bool syncing_ = false;
  uint64_t synced_ = 0;
};

}  // namespace

result<std::unique_ptr<backend>> open_rocks_backend(const std::string& dir) {
  if (dir.empty()) return make_error(errc::invalid_argument, "--data DIR is required");
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  // Every insert looks its id up (to replace a re-sent id); nearly all are absent, which a
  // Bloom filter answers without reading table blocks.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return make_error(errc::io_error, "opening store " + dir + ": " + s.ToString());
  auto b = std::make_unique<rocks_backend>(std::unique_ptr<rocksdb::DB>(raw));
  if (auto st = b->load(); !st) return std::move(st).error();
  return std::unique_ptr<backend>(std::move(b));
}

}  // namespace simdup::detail
