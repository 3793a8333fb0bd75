// HTTP adapter of the dedup service: routes, authentication, limits, metrics and the expiry
// loop. Algorithms live in the store (backend) and fingerprint components.
#include <simdup/json.hpp>
#include <simdup/plan.hpp>
#include <simdup/service.hpp>
#include <simdup/simhash.hpp>

#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include "service/http_server.hpp"
#include "service/metrics.hpp"
#include "service/openapi.hpp"
#include "service/request.hpp"
#include "service/text_fingerprints.hpp"
#include "store/backend.hpp"
#include "util/ascii.hpp"

namespace simdup {

namespace http = detail::http;
using detail::collection_config;
using detail::doc_op;

namespace {

int http_status(errc code) {
  switch (code) {
    case errc::invalid_argument:
    case errc::invalid_input:
      return 400;
    case errc::not_found:
      return 404;
    case errc::too_large:
      return 413;
    case errc::unsupported:
      return 501;
    case errc::unavailable:
      return 503;
    case errc::no_space:
      return 507;
    default:
      return 500;
  }
}

/// Compares without an early exit so the time taken does not reveal the matching prefix.
bool equal_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

result<std::string> read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(errc::not_found, "--token-file " + path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return make_error(errc::invalid_argument, "--token-file " + path + " is empty");
  }
  token = token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
  return token;
}

const char* outcome_name(doc_op op, const detail::doc_outcome& o) {
  switch (op) {
    case doc_op::check:
      return o.matches.empty() ? "unique" : "duplicate";
    case doc_op::insert:
      return "inserted";
    case doc_op::check_insert:
      return o.inserted ? "new" : "duplicate";
  }
  return "unknown";
}

}  // namespace

struct service::impl {
  service_options opt;
  std::unique_ptr<detail::backend> store;
  std::string token;
  detail::metrics stats;
  detail::text_fingerprints texts;
  std::unique_ptr<http::server> http_server;
  std::thread expirer;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  bool stopped = false;
  std::shared_mutex collections_mu;
  std::map<std::string, collection_config> collections;

  /// One request's answer in the making: sent once, with its status and latency counted under
  /// its endpoint's name.
  struct exchange {
    impl* s;
    std::string endpoint;
    std::chrono::steady_clock::time_point start;
    http::reply reply;

    void send(int code, std::string body, std::string content_type = "application/json",
              std::vector<std::pair<std::string, std::string>> headers = {}) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      // Counted before the answer leaves: a client that reads its answer and then asks for
      // /metrics (on another loop) must see it counted. A send that throws (out of memory) is
      // answered, and counted again, as a 500.
      s->stats.observe_request(endpoint, code, took.count());
      reply.send({code, std::move(content_type), std::move(body), std::move(headers)});
    }
    void fail(int code, std::string_view error_code, std::string_view message) {
      send(code, http::error_body(error_code, message));
    }
    void fail(const error_info& err) {
      fail(http_status(err.code), errc_name(err.code), err.message);
    }
  };

  bool redis_store() const { return opt.store.rfind("redis://", 0) == 0; }

  int64_t now() const {
    if (!opt.clock_file.empty()) {
      std::ifstream in(opt.clock_file);
      long long t = 0;
      if (in >> t) return t;
    }
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// The collection's settings; on a miss, reloads the list from the store, since another
  /// process sharing a Redis store may have created it.
  result<collection_config> find(const std::string& name) {
    {
      std::shared_lock lock(collections_mu);
      if (auto it = collections.find(name); it != collections.end()) return it->second;
    }
    if (auto st = refresh(); !st) return std::move(st).error();
    std::shared_lock lock(collections_mu);
    if (auto it = collections.find(name); it != collections.end()) return it->second;
    return make_error(errc::not_found,
                      "no collection \"" + name + "\" (create it with PUT /v1/" + name + ")");
  }

  /// Replaces the list with the store's (another process sharing a Redis store may have
  /// created or deleted some).
  status refresh() {
    auto all = store->collections();
    if (!all) return std::move(all).error();
    std::map<std::string, collection_config> fresh;
    for (auto& c : *all) fresh[c.name] = std::move(c);
    std::unique_lock lock(collections_mu);
    collections.swap(fresh);
    return {};
  }

  collection_config defaults(const std::string& name) const {
    collection_config c;
    c.name = name;
    c.k = opt.default_k;
    c.verify = opt.default_verify;
    c.window_s = opt.default_window_s;
    return c;
  }

  /// Where a request's document went: answered at once (too short to fingerprint, or an insert
  /// already out of the window) or to the store as inputs[index].
  struct doc_route {
    enum class kind { too_short, expired, applied } what = kind::too_short;
    std::size_t index = 0;  ///< into the inputs (applied) or the expired documents
  };

  /// The answer body of a documents request, counting outcomes into `counts`.
  static std::string documents_body(const detail::parsed_request& parsed, doc_op op,
                                    bool int_fingerprints, std::span<const doc_route> routes,
                                    std::span<const detail::doc_input> inputs,
                                    std::span<const detail::doc_input> expired,
                                    std::span<const detail::doc_outcome> outcomes,
                                    std::map<std::string, uint64_t>& counts) {
    const auto& docs = parsed.docs;
    const std::vector<detail::doc_match> no_matches;
    std::string body = parsed.batch ? "{\"results\":[" : "";
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (i > 0) body.push_back(',');
      body += "{\"id\":";
      const doc_route& route = routes[i];
      if (route.what == doc_route::kind::too_short) {
        json::append_string(body, docs[i].id);
        body += ",\"status\":\"too_short\",\"matches\":[]}";
        ++counts["too_short"];
        continue;
      }
      const bool applied = route.what == doc_route::kind::applied;
      const detail::doc_input& in = applied ? inputs[route.index] : expired[route.index];
      const char* outcome = applied ? outcome_name(op, outcomes[route.index]) : "expired";
      ++counts[outcome];
      json::append_string(body, in.id);
      body += ",\"status\":\"";
      body += outcome;
      body += "\",\"fingerprint\":";
      append_fingerprint(body, in.fingerprint, int_fingerprints);
      body += ",\"matches\":[";
      const auto& matches = applied ? outcomes[route.index].matches : no_matches;
      for (std::size_t m = 0; m < matches.size(); ++m) {
        if (m > 0) body.push_back(',');
        body += "{\"id\":";
        json::append_string(body, matches[m].id);
        body += ",\"distance\":" + std::to_string(matches[m].distance);
        body += ",\"jaccard\":";
        append_jaccard(body, matches[m].jaccard);
        body += "}";
      }
      body += "]}";
    }
    if (parsed.batch) body += "]}";
    return body;
  }

  /// A match's Jaccard estimate (shortest round-trip form), or null when it was not verified.
  static void append_jaccard(std::string& body, std::optional<double> jaccard) {
    if (!jaccard) {
      body += "null";
      return;
    }
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *jaccard);
    body.append(buf, ec == std::errc() ? end : buf);
  }

  /// A fingerprint in an answer: 16 hex digits, or the unsigned integer with
  /// ?fingerprint_format=int.
  static void append_fingerprint(std::string& body, uint64_t fp, bool as_integer) {
    if (as_integer) {
      body += std::to_string(fp);
    } else {
      body += '"' + to_hex(fp) + '"';
    }
  }

  /// Whether the query asks for integer fingerprints (`fingerprint_format=int`; `hex`, the
  /// default, or no such parameter: hex). Other parameters are ignored.
  static result<bool> integer_fingerprints(std::string_view query) {
    bool as_integer = false;
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string_view param = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      constexpr std::string_view key = "fingerprint_format=";
      if (param.substr(0, key.size()) != key) continue;
      const std::string_view value = param.substr(key.size());
      if (value != "int" && value != "hex") {
        return make_error(errc::invalid_argument, "fingerprint_format must be hex or int");
      }
      as_integer = value == "int";
    }
    return as_integer;
  }

  /// Answers once the store says the changes are durable (at once when nothing was written).
  void handle_documents(const std::string& name, const std::string& request_body,
                        std::string_view query, doc_op op, exchange ex) {
    auto config = find(name);
    if (!config) return ex.fail(config.error());
    auto int_fingerprints = integer_fingerprints(query);
    if (!int_fingerprints) return ex.fail(int_fingerprints.error());
    auto parsed = detail::parse_request(request_body, {opt.max_documents, 1024});
    if (!parsed) return ex.fail(parsed.error());
    const int64_t clock = now();
    auto& docs = parsed->docs;
    // Documents given as text are fingerprinted first; too short ones, and inserts whose time
    // is already out of the window (a lookup would not find them), are answered without
    // touching the index.
    const bool stores = op != doc_op::check;
    const int64_t window = config->window_s;
    std::vector<detail::doc_input> inputs;
    std::vector<detail::doc_input> expired;
    std::vector<doc_route> routes(docs.size());
    inputs.reserve(docs.size());
    detail::doc_input in;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (docs[i].fingerprint) {
        in.fingerprint = *docs[i].fingerprint;
        in.sketch.clear();
      } else {
        auto signed_text = texts.sign(*config, docs[i].text, in);
        if (!signed_text) return ex.fail(signed_text.error());
        if (!*signed_text) continue;  // too short
      }
      // Moved: the answer names a document by its input from here on.
      in.id = std::move(docs[i].id);
      in.time = docs[i].time.value_or(clock);
      const bool out_of_window = stores && window > 0 && in.time <= clock - window;
      auto& into = out_of_window ? expired : inputs;
      routes[i] = {out_of_window ? doc_route::kind::expired : doc_route::kind::applied,
                   into.size()};
      into.push_back(std::move(in));
    }
    std::vector<detail::doc_outcome> outcomes(inputs.size());
    uint64_t ticket = 0;
    if (!inputs.empty()) {
      auto t = store->apply_pending(*config, op, inputs, clock, opt.max_matches, outcomes);
      if (!t) return ex.fail(t.error());
      ticket = *t;
    }
    std::map<std::string, uint64_t> counts;
    std::string body =
        documents_body(*parsed, op, *int_fingerprints, routes, inputs, expired, outcomes, counts);
    answer_when_durable(ticket, std::move(ex),
                        [this, name = config->name, counts = std::move(counts),
                         body = std::move(body)](exchange& e, const status& durable) mutable {
                          if (!durable) return e.fail(durable.error());
                          for (const auto& [outcome, n] : counts)
                            stats.count_documents(name, outcome, n);
                          e.send(200, std::move(body));
                        });
  }

  /// Calls answer(exchange&, status) once the store's changes under `ticket` are durable: at
  /// once for ticket 0, else from the store's sync thread (the event loop serves others
  /// meanwhile).
  template <class Answer>
  void answer_when_durable(uint64_t ticket, exchange ex, Answer answer) {
    if (ticket == 0) return answer(ex, status{});
    // std::function needs a copyable callable: the exchange (move-only) is shared.
    auto shared = std::make_shared<exchange>(std::move(ex));
    store->when_durable(
        ticket, [shared, answer = std::move(answer)](status st) mutable { answer(*shared, st); });
  }

  void handle_put(const std::string& name, const std::string& request_body, exchange ex) {
    // Fields left out keep an existing collection's values rather than today's defaults, so
    // that a client re-sending its settings at start is not refused once defaults change (a
    // collection made before verification, say, keeps k 3 and no verification).
    auto existing = find(name);
    auto config = detail::config_from_json(request_body, existing ? *existing : defaults(name));
    if (!config) return ex.fail(config.error());
    config->name = name;
    if (auto st = store->create(*config); !st) return ex.fail(st.error());
    {
      std::unique_lock lock(collections_mu);
      collections[name] = *config;
    }
    ex.send(200, detail::to_json(*config));
  }

  /// GET /v1: every collection's settings and document count, by name.
  void handle_list(exchange ex) {
    if (auto st = refresh(); !st) return ex.fail(st.error());
    std::vector<collection_config> all;
    {
      std::shared_lock lock(collections_mu);
      for (const auto& [name, c] : collections) all.push_back(c);
    }
    std::string body = "{\"collections\":[";
    for (std::size_t i = 0; i < all.size(); ++i) {
      auto s = store->stats(all[i]);
      if (!s && s.error().code == errc::not_found) continue;  // deleted meanwhile
      if (!s) return ex.fail(s.error());
      if (body.back() != '[') body.push_back(',');
      std::string settings = detail::to_json(all[i]);
      settings.pop_back();  // the closing brace: the count goes inside
      body += settings + ",\"documents\":" + std::to_string(s->documents) + "}";
    }
    body += "]}";
    ex.send(200, std::move(body));
  }

  /// DELETE /v1/{c}: the collection and its documents, durably (synced before the answer).
  void handle_drop(const std::string& name, exchange ex) {
    if (auto st = store->drop(name); !st) return ex.fail(st.error());
    {
      std::unique_lock lock(collections_mu);
      collections.erase(name);
    }
    std::string body = "{\"name\":";
    json::append_string(body, name);
    body += ",\"deleted\":true}";
    ex.send(200, std::move(body));
  }

  /// GET /v1/{c}/documents/{id}: its fingerprint, time and when the window drops it.
  void handle_get_document(const std::string& name, std::string_view raw_id, std::string_view query,
                           exchange ex) {
    auto config = find(name);
    if (!config) return ex.fail(config.error());
    auto int_fingerprints = integer_fingerprints(query);
    if (!int_fingerprints) return ex.fail(int_fingerprints.error());
    const auto id = http::percent_decode(raw_id);
    if (!id || id->empty()) {
      return ex.fail(400, "invalid_input", "the document id in the path is not valid");
    }
    auto found = store->lookup(*config, *id);
    if (!found) return ex.fail(found.error());
    // Out of the window is gone, even before the expiry loop removes it.
    const int64_t window = config->window_s;
    const int64_t clock = now();
    std::optional<detail::stored_document> doc = found->document;
    if (doc && window > 0 && doc->time + window <= clock) doc.reset();
    std::string body;
    if (doc) {
      body = "{\"id\":";
      json::append_string(body, *id);
      body += ",\"fingerprint\":";
      append_fingerprint(body, doc->fingerprint, *int_fingerprints);
      body += ",\"time\":" + std::to_string(doc->time) + ",\"expires\":";
      body += window > 0 ? std::to_string(doc->time + window) : std::string("null");
      body += "}";
    }
    answer_when_durable(
        found->ticket, std::move(ex),
        [id = *id, body = std::move(body)](exchange& e, const status& durable) mutable {
          if (!durable) return e.fail(durable.error());
          if (body.empty()) {
            return e.fail(404, "not_found", "no document \"" + id + "\"");
          }
          e.send(200, std::move(body));
        });
  }

  void handle_stats(const std::string& name, exchange ex) {
    auto config = find(name);
    if (!config) return ex.fail(config.error());
    auto s = store->stats(*config);
    if (!s) return ex.fail(s.error());
    std::string body = "{\"collection\":" + detail::to_json(*config);
    body += ",\"documents\":" + std::to_string(s->documents);
    body += ",\"inserted\":" + std::to_string(s->inserted);
    body += ",\"expired\":" + std::to_string(s->expired);
    body += ",\"deleted\":" + std::to_string(s->deleted);
    body += ",\"index_bytes\":" + std::to_string(s->index_bytes);
    body += ",\"id_map_bytes\":" + std::to_string(s->id_map_bytes);
    body += ",\"index_segments\":" + std::to_string(s->index_segments) + "}";
    ex.send(200, std::move(body));
  }

  void handle_delete(const std::string& name, std::string_view raw_id, exchange ex) {
    auto config = find(name);
    if (!config) return ex.fail(config.error());
    const auto id = http::percent_decode(raw_id);
    if (!id || id->empty()) {
      return ex.fail(400, "invalid_input", "the document id in the path is not valid");
    }
    auto removed = store->remove_pending(*config, *id);
    if (!removed) return ex.fail(removed.error());
    std::string body;
    if (removed->removed) {
      body = "{\"id\":";
      json::append_string(body, *id);
      body += ",\"deleted\":true}";
    }
    // A 404 too waits for the sync: the document may be gone by a removal not yet durable.
    answer_when_durable(removed->ticket, std::move(ex),
                        [found = removed->removed, id = *id, body = std::move(body)](
                            exchange& e, const status& durable) mutable {
                          if (!durable) return e.fail(durable.error());
                          if (!found) return e.fail(404, "not_found", "no document \"" + id + "\"");
                          e.send(200, std::move(body));
                        });
  }

  void handle_metrics(exchange ex) {
    std::map<std::string, detail::metrics::collection_sample> samples;
    (void)refresh();
    std::vector<collection_config> all;
    {
      std::shared_lock lock(collections_mu);
      for (const auto& [name, c] : collections) all.push_back(c);
    }
    for (const auto& c : all) {
      if (auto s = store->stats(c))
        samples[c.name] = {s->documents, s->expired, s->deleted, s->index_bytes, s->id_map_bytes};
    }
    ex.send(200, stats.render(samples), "text/plain; version=0.0.4");
  }

  bool authorized(const http::request& req) const {
    if (token.empty()) return true;
    // The scheme is case-insensitive (RFC 9110 11.1); the token is not.
    constexpr std::string_view scheme = "bearer ";
    const std::string_view header = req.authorization;
    if (!detail::iequals(header.substr(0, scheme.size()), scheme)) return false;
    return equal_secret(header.substr(scheme.size()), token);
  }

  /// Routes a request; every path answers through `ex` exactly once.
  void route(http::request&& req, exchange ex) {
    const std::string_view path = req.path;
    const auto wrong_method = [&](const char* allowed) {
      ex.endpoint = "error";
      ex.send(405,
              http::error_body("method_not_allowed", req.method + " is not allowed on " + req.path),
              "application/json", {{"Allow", allowed}});
    };
    if (path == "/healthz") {
      ex.endpoint = "healthz";
      if (req.method != "GET") return wrong_method("GET");
      if (auto st = store->health(); !st) return ex.fail(st.error());
      return ex.send(200, "{\"status\":\"ok\"}");
    }
    if (!authorized(req)) {
      ex.endpoint = "unauthorized";
      return ex.send(401, http::error_body("unauthorized", "missing or wrong bearer token"),
                     "application/json", {{"WWW-Authenticate", "Bearer"}});
    }
    if (path == "/metrics") {
      ex.endpoint = "metrics";
      if (req.method != "GET") return wrong_method("GET");
      return handle_metrics(std::move(ex));
    }
    if (path == "/v1" || path == "/v1/") {
      ex.endpoint = "collections";
      if (req.method != "GET") return wrong_method("GET");
      return handle_list(std::move(ex));
    }
    if (path == "/v1/openapi.json") {
      // Ahead of the collection routes: "openapi.json" cannot name a collection.
      ex.endpoint = "openapi";
      if (req.method != "GET") return wrong_method("GET");
      return ex.send(200, std::string(detail::openapi_json()));
    }
    constexpr std::string_view v1 = "/v1/";
    if (path.substr(0, v1.size()) == v1) {
      const std::string_view rest = path.substr(v1.size());
      const std::size_t slash = rest.find('/');
      const std::string name(rest.substr(0, slash));
      const std::string_view sub = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
      if (detail::valid_collection_name(name)) {
        if (slash == std::string_view::npos) {
          if (req.method == "PUT") {
            ex.endpoint = "create";
            return handle_put(name, req.body, std::move(ex));
          }
          if (req.method == "GET") {
            ex.endpoint = "collection";
            return handle_stats(name, std::move(ex));
          }
          if (req.method == "DELETE") {
            ex.endpoint = "drop";
            return handle_drop(name, std::move(ex));
          }
          ex.endpoint = "collection";
          return wrong_method("GET, PUT, DELETE");
        }
        if (sub == "stats") {
          ex.endpoint = "stats";
          if (req.method != "GET") return wrong_method("GET");
          return handle_stats(name, std::move(ex));
        }
        const std::pair<std::string_view, doc_op> ops[] = {{"check", doc_op::check},
                                                           {"insert", doc_op::insert},
                                                           {"check-insert", doc_op::check_insert}};
        for (const auto& [op_name, op] : ops) {
          if (sub != op_name) continue;
          ex.endpoint = std::string(op_name);
          if (req.method != "POST") return wrong_method("POST");
          return handle_documents(name, req.body, req.query, op, std::move(ex));
        }
        constexpr std::string_view documents = "documents/";
        if (sub.substr(0, documents.size()) == documents && sub.size() > documents.size()) {
          const std::string_view id = sub.substr(documents.size());
          if (req.method == "GET") {
            ex.endpoint = "document";
            return handle_get_document(name, id, req.query, std::move(ex));
          }
          ex.endpoint = "delete";
          if (req.method != "DELETE") return wrong_method("GET, DELETE");
          return handle_delete(name, id, std::move(ex));
        }
      }
    }
    ex.endpoint = "error";
    ex.fail(404, "not_found", "no such endpoint: " + req.path);
  }

  void serve(http::request&& req, http::reply reply) {
    exchange ex{this, "", std::chrono::steady_clock::now(), std::move(reply)};
    route(std::move(req), std::move(ex));
  }

  void expire_loop() {
    std::unique_lock lock(stop_mu);
    auto last_trim = std::chrono::steady_clock::now();
    while (!stopping) {
      stop_cv.wait_for(lock, std::chrono::milliseconds(opt.expire_interval_ms));
      if (stopping) break;
      lock.unlock();
      std::vector<collection_config> all;
      {
        std::shared_lock clock(collections_mu);
        for (const auto& [name, c] : collections) all.push_back(c);
      }
      const int64_t t = now();
      for (const auto& c : all) {
        // A collection deleted since the list was copied is no error.
        if (auto st = store->expire(c, t); !st && st.error().code != errc::not_found) {
          std::fprintf(stderr, "simdup serve: expiring %s: %s\n", c.name.c_str(),
                       st.error().message.c_str());
        }
      }
#if defined(__GLIBC__)
      // Index merges and segment files free large blocks that glibc's arenas keep (about 15%
      // of the process at 10M documents); hand them back now and then.
      if (std::chrono::steady_clock::now() - last_trim > std::chrono::seconds(10)) {
        malloc_trim(0);
        last_trim = std::chrono::steady_clock::now();
      }
#endif
      lock.lock();
    }
  }
};

service::service(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

service::~service() {
  stop();
}

result<std::unique_ptr<service>> service::create(const service_options& options) {
  auto p = std::make_unique<impl>();
  p->opt = options;
  if (status s = validate_k(options.default_k, "default_k"); !s) return s.error();
  if (!(options.default_verify >= 0 && options.default_verify <= 1)) {
    return make_error(errc::invalid_argument,
                      "default_verify must be 0 (off) or a threshold in (0, 1], got " +
                          std::to_string(options.default_verify));
  }
  if (options.max_documents == 0 || options.max_body_bytes == 0 || options.max_matches == 0) {
    return make_error(errc::invalid_argument, "limits must be positive");
  }
  if (!options.token_file.empty()) {
    auto t = read_token(options.token_file);
    if (!t) return std::move(t).error();
    p->token = std::move(*t);
  }
  detail::rocks_options ro;
  ro.snapshot_documents = options.snapshot_documents;
  auto store =
      p->redis_store() ? detail::open_redis_backend(options.store)
      : options.store == "rocksdb"
          ? detail::open_rocks_backend(options.data_dir, ro)
          : result<std::unique_ptr<detail::backend>>(make_error(
                errc::invalid_argument, "--store must be rocksdb or redis://HOST:PORT[/DB]"));
  if (!store) return std::move(store).error();
  p->store = std::move(*store);
  if (auto st = p->refresh(); !st) return std::move(st).error();
  return std::unique_ptr<service>(new service(std::move(p)));
}

status service::add_collection(const std::string& name) {
  auto config = impl_->defaults(name);
  if (auto st = impl_->store->create(config); !st) return st;
  return impl_->refresh();
}

result<int> service::start() {
  impl& s = *impl_;
  {
    std::lock_guard lock(s.stop_mu);
    if (s.stopping || s.http_server) {
      return make_error(errc::invalid_argument, "the service was already started or stopped");
    }
  }
  http::server_options o;
  o.host = s.opt.host;
  o.port = s.opt.port;
  // Handlers run on the event loops. The RocksDB store answers from memory and its WAL buffer
  // (the fsync happens on its own thread), so a loop per core keeps every core busy; a Redis
  // call holds its loop for a network round trip, so more loops keep more calls in flight.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  o.threads =
      s.opt.threads > 0 ? s.opt.threads : std::min(256, s.redis_store() ? 4 * cores : cores);
  o.max_body_bytes = s.opt.max_body_bytes;
  o.timeout_s = std::max(1, s.opt.timeout_s);
  o.on_rejected = [&s](int code) { s.stats.observe_request("error", code, 0.0); };
  auto server = http::server::start(std::move(o), [&s](http::request&& req, http::reply reply) {
    s.serve(std::move(req), std::move(reply));
  });
  if (!server) return std::move(server).error();
  s.http_server = std::move(*server);
  s.expirer = std::thread([&s] { s.expire_loop(); });
  return s.http_server->port();
}

void service::run_until_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  stop();
}

void service::stop() {
  impl& s = *impl_;
  {
    std::unique_lock lock(s.stop_mu);
    if (s.stopping) {
      // Another thread is stopping (a signal and the destructor, say): return once it is done.
      s.stop_cv.wait(lock, [&s] { return s.stopped; });
      return;
    }
    s.stopping = true;
  }
  s.stop_cv.notify_all();
  // Stops accepting and waits until every request received has been answered (their writes
  // synced), before the store closes.
  if (s.http_server) s.http_server->stop();
  if (s.expirer.joinable()) s.expirer.join();
  s.store.reset();
  {
    std::lock_guard lock(s.stop_mu);
    s.stopped = true;
  }
  s.stop_cv.notify_all();
}

void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace simdup
