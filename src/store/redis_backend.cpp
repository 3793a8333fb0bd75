// Shared Redis backend: the index lives in a redis-server, and every change runs in one Lua
// script (redis_script.hpp), so check-insert is atomic across all simdup processes using it.
// Durability is the server's (appendonly / fsync settings).
#include <hiredis/hiredis.h>

#include <charconv>
#include <cstdio>
#include <mutex>

#include <simdup/plan.hpp>

#include "store/backend.hpp"
#include "store/redis_script.hpp"

namespace simdup::detail {
namespace {

constexpr const char* collections_key = "simdup:collections";

struct reply_deleter {
  void operator()(redisReply* r) const {
    if (r) freeReplyObject(r);
  }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

struct context_deleter {
  void operator()(redisContext* c) const {
    if (c) redisFree(c);
  }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;

std::string key_prefix(const std::string& collection) {
  return "simdup:{" + collection + "}:";
}

/// Pigeonhole with small sets: split the 64 bits into k+2 blocks of near-equal width; two
/// fingerprints within k agree on at least 2 of them, so on at least one pair of blocks. Each
/// pair of blocks (about 2*64/(k+2) bits: 26 for k=3) names one set key, so a probe reads
/// C(k+2, 2) sets (10 for k=3) that hold only documents sharing both blocks -- a handful even
/// at 10M documents -- instead of k+1 sets of every document sharing one 16-bit block.
int block_key_count(int k) {
  return (k + 2) * (k + 1) / 2;
}

/// Appends the block_key_count(k) key suffixes "<pair>:<hex of the two blocks>".
void append_block_keys(uint64_t fp, int k, std::vector<std::string>& args) {
  const int blocks = k + 2;
  uint64_t value[max_index_k + 2];
  int width[max_index_k + 2];
  int shift = 0;
  for (int b = 0; b < blocks; ++b) {
    width[b] = 64 / blocks + (b < 64 % blocks ? 1 : 0);
    value[b] = (fp >> shift) & ((uint64_t{1} << width[b]) - 1);
    shift += width[b];
  }
  int pair = 0;
  for (int i = 0; i < blocks; ++i) {
    for (int j = i + 1; j < blocks; ++j) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%d:%llx", pair++,
                    static_cast<unsigned long long>((value[i] << width[j]) | value[j]));
      args.emplace_back(buf);
    }
  }
}

/// A sketch as the script reads it: 4-byte little-endian hashes.
std::string sketch_bytes(std::span<const uint32_t> hashes) {
  std::string out;
  out.reserve(hashes.size() * 4);
  for (const uint32_t h : hashes) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((h >> (8 * b)) & 0xff));
  }
  return out;
}

/// The hashes of a stored sketch (sketch_bytes' form).
void decode_sketch(std::string_view bytes, std::vector<uint32_t>& out) {
  out.resize(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    uint32_t h = 0;
    for (int b = 3; b >= 0; --b) h = (h << 8) | static_cast<unsigned char>(bytes[4 * i + b]);
    out[i] = h;
  }
}

/// A docs value, "FP TIME S1 .. Sn" (redis_script.hpp): its fingerprint and time; false when
/// malformed.
bool parse_document(std::string_view v, stored_document& d) {
  const char* end = v.data() + v.size();
  const auto space = v.find(' ');
  if (space != 16 ||
      std::from_chars(v.data(), v.data() + 16, d.fingerprint, 16).ec != std::errc()) {
    return false;
  }
  return std::from_chars(v.data() + 17, end, d.time).ec == std::errc();
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// Band keys as the script takes and stores them: 16 hex digits each, concatenated; empty when
/// the document has none or the collection cannot use them (no bands, or no verification to
/// confirm what a band finds).
std::string band_key_string(const collection_config& config, std::span<const uint64_t> keys) {
  if (config.verify <= 0 || keys.empty() || keys.size() != config.minhash.bands) return {};
  std::string out;
  out.reserve(keys.size() * 16);
  for (const uint64_t key : keys) out += hex16(key);
  return out;
}

/// The keys of a stored band_key_string; false when malformed.
bool parse_band_key_string(std::string_view text, std::vector<uint64_t>& out) {
  out.clear();
  if (text.size() % 16 != 0) return false;
  for (std::size_t i = 0; i < text.size(); i += 16) {
    uint64_t key = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 16, key, 16);
    if (ec != std::errc() || end != text.data() + i + 16) return false;
    out.push_back(key);
  }
  return true;
}

class redis_backend final : public backend {
 public:
  redis_backend(std::string host, int port, int db)
      : host_(std::move(host)), port_(port), db_(db) {}

  /// Connects once at start so that a wrong address fails `simdup serve` immediately.
  status check_connection() {
    auto c = acquire();
    if (!c) return std::move(c).error();
    release(std::move(*c));
    return {};
  }

  result<std::vector<collection_config>> collections() override {
    auto r = command({"HGETALL", collections_key});
    if (!r) return std::move(r).error();
    std::vector<collection_config> out;
    const redisReply* rep = r->get();
    for (std::size_t i = 0; i + 1 < rep->elements; i += 2) {
      const collection_config base =
          stored_config_base(std::string(rep->element[i]->str, rep->element[i]->len));
      auto c = config_from_json({rep->element[i + 1]->str, rep->element[i + 1]->len}, base);
      if (!c) {
        return make_error(errc::corrupt_data, "settings of collection \"" + base.name +
                                                  "\" in Redis: " + c.error().message);
      }
      out.push_back(std::move(*c));
    }
    return out;
  }

  status create(const collection_config& config) override {
    if (auto st = validate(config); !st) return st;
    const std::string json = to_json(config);
    auto r = command({"HSETNX", collections_key, config.name, json});
    if (!r) return std::move(r).error();
    if ((*r)->integer == 1) return {};
    auto existing = command({"HGET", collections_key, config.name});
    if (!existing) return std::move(existing).error();
    const redisReply* rep = existing->get();
    // Compared as settings, not as text: settings stored by an earlier build lack newer fields.
    if (rep->type == REDIS_REPLY_STRING) {
      auto stored = config_from_json({rep->str, rep->len}, stored_config_base(config.name));
      if (stored && to_json(*stored) == json) return {};
    }
    return make_error(errc::invalid_argument,
                      "collection \"" + config.name + "\" exists with other settings");
  }

  /// Redis answers after the script ran; its own persistence settings decide durability, so
  /// there is nothing to wait for (ticket 0).
  result<uint64_t> apply_pending(const collection_config& config, doc_op op,
                                 std::span<const doc_input> docs, int64_t now,
                                 std::size_t max_matches, std::span<doc_outcome> out) override {
    const char* name = op == doc_op::check    ? "check"
                       : op == doc_op::insert ? "insert"
                                              : "check_insert";
    std::vector<std::string> args = script_args(config, name, now, max_matches, docs.size());
    for (const doc_input& d : docs) {
      args.push_back(d.id);
      args.push_back(hex16(d.fingerprint));
      args.push_back(std::to_string(d.time));
      args.push_back(config.verify > 0 ? sketch_bytes(d.sketch) : std::string());
      args.push_back(band_key_string(config, d.band_keys));
      append_block_keys(d.fingerprint, config.k, args);
    }
    auto r = run_script(args);
    if (!r) return std::move(r).error();
    const redisReply* rep = r->get();
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != docs.size()) {
      return make_error(errc::internal, "unexpected answer from the Redis script");
    }
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const redisReply* d = rep->element[i];
      if (d->type != REDIS_REPLY_ARRAY || d->elements == 0 || d->elements % 4 != 1) {
        return make_error(errc::internal, "unexpected answer from the Redis script");
      }
      out[i] = doc_outcome{};
      out[i].inserted = d->element[0]->integer == 1;
      for (std::size_t m = 1; m + 3 < d->elements; m += 4) {
        // The Jaccard comes as shared / compared hashes (Lua numbers reach Redis as integers),
        // divided here as sketch_jaccard divides; 0 compared: not verified.
        const long long shared = d->element[m + 2]->integer, total = d->element[m + 3]->integer;
        std::optional<double> jaccard;
        if (total > 0) jaccard = static_cast<double>(shared) / static_cast<double>(total);
        out[i].matches.push_back({std::string(d->element[m]->str, d->element[m]->len),
                                  static_cast<int>(d->element[m + 1]->integer), jaccard});
      }
    }
    return uint64_t{0};
  }

  void when_durable(uint64_t, std::function<void(status)> done) override { done({}); }

  result<pending_removal> remove_pending(const collection_config& config,
                                         const std::string& id) override {
    auto args = script_args(config, "delete", 0, 0, 0);
    args.push_back(id);
    auto r = run_script(args);
    if (!r) return std::move(r).error();
    return pending_removal{(*r)->integer == 1, 0};
  }

  status expire(const collection_config& config, int64_t now) override {
    if (config.window_s <= 0) return {};
    auto r = run_script(script_args(config, "expire", now, 0, 0));
    if (!r) return std::move(r).error();
    return {};
  }

  result<pending_lookup> lookup(const collection_config& config, const std::string& id) override {
    auto r = command({"HGET", key_prefix(config.name) + "docs", id});
    if (!r) return std::move(r).error();
    const redisReply* rep = r->get();
    pending_lookup out;
    if (rep->type != REDIS_REPLY_STRING) return out;
    stored_document d;
    if (!parse_document({rep->str, rep->len}, d)) return malformed(config, id);
    out.document = d;
    return out;
  }

  /// HSCAN of the docs hash a page at a time, with the page's sketches and band keys in one
  /// HMGET each.
  result<uint64_t> for_each_document(
      const collection_config& config,
      const std::function<status(const document_view&)>& visit) override {
    auto exists = command({"HEXISTS", collections_key, config.name});
    if (!exists) return std::move(exists).error();
    if ((*exists)->integer == 0) {
      return make_error(errc::not_found, "no collection \"" + config.name + "\"");
    }
    const std::string p = key_prefix(config.name);
    std::string cursor = "0";
    std::vector<uint32_t> sketch;
    std::vector<uint64_t> band_keys;
    do {
      auto page = command({"HSCAN", p + "docs", cursor, "COUNT", "1000"});
      if (!page) return std::move(page).error();
      const redisReply* rep = page->get();
      if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
          rep->element[1]->type != REDIS_REPLY_ARRAY) {
        return make_error(errc::internal, "unexpected answer from Redis HSCAN");
      }
      cursor.assign(rep->element[0]->str, rep->element[0]->len);
      const redisReply* items = rep->element[1];
      // The page's values of a per-document hash (sketch, bands), in the page's order.
      const auto values_of = [&](const char* hash) -> result<reply_ptr> {
        std::vector<std::string> cmd = {"HMGET", p + hash};
        for (std::size_t i = 0; i + 1 < items->elements; i += 2) {
          cmd.emplace_back(items->element[i]->str, items->element[i]->len);
        }
        auto got = command(cmd);
        if (!got) return std::move(got).error();
        if ((*got)->type != REDIS_REPLY_ARRAY || (*got)->elements != items->elements / 2) {
          return make_error(errc::internal, "unexpected answer from Redis HMGET");
        }
        return got;
      };
      reply_ptr sketches, bands;
      if (config.verify > 0 && items->elements > 0) {
        auto got = values_of("sketch");
        if (!got) return std::move(got).error();
        sketches = std::move(*got);
        if (config.minhash.bands > 0) {
          got = values_of("bands");
          if (!got) return std::move(got).error();
          bands = std::move(*got);
        }
      }
      for (std::size_t i = 0; i + 1 < items->elements; i += 2) {
        const std::string_view id(items->element[i]->str, items->element[i]->len);
        stored_document d;
        if (!parse_document({items->element[i + 1]->str, items->element[i + 1]->len}, d)) {
          return malformed(config, id);
        }
        sketch.clear();
        if (sketches) {
          const redisReply* s = sketches->element[i / 2];
          if (s->type == REDIS_REPLY_STRING) decode_sketch({s->str, s->len}, sketch);
        }
        band_keys.clear();
        if (bands) {
          const redisReply* b = bands->element[i / 2];
          if (b->type == REDIS_REPLY_STRING &&
              !parse_band_key_string({b->str, b->len}, band_keys)) {
            return malformed(config, id);
          }
        }
        if (auto st = visit({id, d.fingerprint, d.time, sketch, band_keys}); !st) {
          return std::move(st).error();
        }
      }
    } while (cursor != "0");
    return uint64_t{0};
  }

  status drop(const std::string& name) override {
    // Gone from the list first (atomically, for every process), then its keys, a batch at a
    // time (UNLINK frees them off Redis's main thread).
    auto r = command({"HDEL", collections_key, name});
    if (!r) return std::move(r).error();
    if ((*r)->integer == 0) return make_error(errc::not_found, "no collection \"" + name + "\"");
    std::string cursor = "0";
    do {
      auto page = command({"SCAN", cursor, "MATCH", key_prefix(name) + "*", "COUNT", "1000"});
      if (!page) return std::move(page).error();
      const redisReply* rep = page->get();
      if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
        return make_error(errc::internal, "unexpected answer from Redis SCAN");
      }
      cursor.assign(rep->element[0]->str, rep->element[0]->len);
      const redisReply* keys = rep->element[1];
      if (keys->elements == 0) continue;
      std::vector<std::string> cmd = {"UNLINK"};
      for (std::size_t i = 0; i < keys->elements; ++i) {
        cmd.emplace_back(keys->element[i]->str, keys->element[i]->len);
      }
      if (auto u = command(cmd); !u) return std::move(u).error();
    } while (cursor != "0");
    return {};
  }

  result<collection_stats> stats(const collection_config& config) override {
    const std::string p = key_prefix(config.name);
    auto len = command({"HLEN", p + "docs"});
    if (!len) return std::move(len).error();
    auto counters = command({"HMGET", p + "stats", "inserted", "expired", "deleted"});
    if (!counters) return std::move(counters).error();
    collection_stats s;
    s.documents = static_cast<uint64_t>((*len)->integer);
    uint64_t* fields[] = {&s.inserted, &s.expired, &s.deleted};
    for (std::size_t i = 0; i < 3 && i < (*counters)->elements; ++i) {
      const redisReply* e = (*counters)->element[i];
      if (e->type == REDIS_REPLY_STRING) std::from_chars(e->str, e->str + e->len, *fields[i]);
    }
    return s;
  }

 private:
  static error_info malformed(const collection_config& config, std::string_view id) {
    return make_error(errc::corrupt_data, "document \"" + std::string(id) + "\" of collection " +
                                              config.name + " in Redis is malformed");
  }

  std::vector<std::string> script_args(const collection_config& config, const char* op, int64_t now,
                                       std::size_t max_matches, std::size_t docs) {
    return {key_prefix(config.name),
            op,
            std::to_string(config.k),
            std::to_string(config.window_s),
            std::to_string(now),
            std::to_string(max_matches),
            std::to_string(block_key_count(config.k)),
            std::to_string(docs),
            verify_threshold(config.verify),
            std::to_string(config.sketch),
            std::to_string(config.minhash.bands),
            std::to_string(config.minhash.max_bucket)};
  }

  /// The threshold in its shortest round-trip form, so that Lua's tonumber reads the same
  /// double; "0": no verification.
  static std::string verify_threshold(double threshold) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, threshold);
    return ec == std::errc() ? std::string(buf, end) : "0";
  }

  /// EVALSHA, loading the script once per server (again after a SCRIPT FLUSH or restart).
  result<reply_ptr> run_script(const std::vector<std::string>& args) {
    std::vector<std::string> cmd = {"EVALSHA", sha(), "1"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto r = command(cmd);
    if (!r && r.error().message.find("NOSCRIPT") != std::string::npos) {
      {
        std::lock_guard lock(mu_);
        sha_.clear();
      }
      cmd[1] = sha();
      r = command(cmd);
    }
    return r;
  }

  std::string sha() {
    {
      std::lock_guard lock(mu_);
      if (!sha_.empty()) return sha_;
    }
    auto r = command({"SCRIPT", "LOAD", redis_script});
    if (!r || (*r)->type != REDIS_REPLY_STRING) return "";
    std::lock_guard lock(mu_);
    sha_.assign((*r)->str, (*r)->len);
    return sha_;
  }

  result<context_ptr> acquire() {
    {
      std::lock_guard lock(mu_);
      if (!idle_.empty()) {
        context_ptr c = std::move(idle_.back());
        idle_.pop_back();
        return c;
      }
    }
    const timeval timeout{5, 0};
    context_ptr c(redisConnectWithTimeout(host_.c_str(), port_, timeout));
    if (!c || c->err) {
      return make_error(errc::unavailable, "cannot connect to Redis at " + host_ + ":" +
                                               std::to_string(port_) + ": " +
                                               (c ? c->errstr : "out of memory"));
    }
    redisSetTimeout(c.get(), timeout);
    if (db_ != 0) {
      reply_ptr r(static_cast<redisReply*>(redisCommand(c.get(), "SELECT %d", db_)));
      if (!r || r->type == REDIS_REPLY_ERROR) {
        return make_error(errc::unavailable, "Redis SELECT " + std::to_string(db_) + " failed");
      }
    }
    return c;
  }

  void release(context_ptr c) {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(c));
  }

  result<reply_ptr> command(const std::vector<std::string>& args) {
    auto c = acquire();
    if (!c) return std::move(c).error();
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    reply_ptr r(static_cast<redisReply*>(
        redisCommandArgv(c->get(), static_cast<int>(argv.size()), argv.data(), lens.data())));
    if (!r) {
      // The connection is broken (its error is set); drop it rather than returning it.
      return make_error(errc::unavailable, std::string("Redis: ") + (*c)->errstr);
    }
    release(std::move(*c));
    if (r->type == REDIS_REPLY_ERROR) {
      return make_error(errc::unavailable, "Redis: " + std::string(r->str, r->len));
    }
    return r;
  }

  std::string host_;
  int port_;
  int db_;
  std::mutex mu_;
  std::vector<context_ptr> idle_;
  std::string sha_;
};

}  // namespace

result<std::unique_ptr<backend>> open_redis_backend(const std::string& url) {
  // redis://HOST:PORT[/DB]
  constexpr std::string_view scheme = "redis://";
  std::string_view rest = std::string_view(url).substr(scheme.size());
  int db = 0;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    const auto tail = rest.substr(slash + 1);
    if (std::from_chars(tail.data(), tail.data() + tail.size(), db).ec != std::errc() || db < 0) {
      return make_error(errc::invalid_argument, "--store " + url + ": bad database number");
    }
    rest = rest.substr(0, slash);
  }
  const auto colon = rest.rfind(':');
  int port = 6379;
  if (colon != std::string_view::npos) {
    const auto p = rest.substr(colon + 1);
    if (std::from_chars(p.data(), p.data() + p.size(), port).ec != std::errc() || port <= 0 ||
        port > 65535) {
      return make_error(errc::invalid_argument, "--store " + url + ": bad port");
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return make_error(errc::invalid_argument, "--store " + url + ": no host");
  auto b = std::make_unique<redis_backend>(std::string(rest), port, db);
  if (auto st = b->check_connection(); !st) return std::move(st).error();
  return std::unique_ptr<backend>(std::move(b));
}

}  // namespace simdup::detail
