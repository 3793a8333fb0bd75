// HTTP adapter of the dedup service: routes, authentication, limits, metrics and the expiry
// loop. Algorithms live in the store (backend) and fingerprint components.
#include <simdup/json.hpp>
#include <simdup/service.hpp>
#include <simdup/simhash.hpp>

#include <httplib.h>
#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include "service/metrics.hpp"
#include "service/request.hpp"
#include "service/text_fingerprints.hpp"
#include "store/backend.hpp"

namespace simdup {

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
    default:
      return 500;
  }
}

void send_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void send_error(httplib::Response& res, int status, std::string_view code,
                std::string_view message) {
  std::string body = "{\"error\":{\"code\":";
  json::append_string(body, code);
  body += ",\"message\":";
  json::append_string(body, message);
  body += "}}";
  send_json(res, status, body);
}

void send_error(httplib::Response& res, const error_info& err) {
  send_error(res, http_status(err.code), errc_name(err.code), err.message);
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
  httplib::Server http;
  std::thread listener;
  std::thread expirer;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  bool stopped = false;
  std::shared_mutex collections_mu;
  std::map<std::string, collection_config> collections;

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

  status refresh() {
    auto all = store->collections();
    if (!all) return std::move(all).error();
    std::unique_lock lock(collections_mu);
    for (auto& c : *all) collections[c.name] = std::move(c);
    return {};
  }

  collection_config defaults(const std::string& name) const {
    collection_config c;
    c.name = name;
    c.k = opt.default_k;
    c.window_s = opt.default_window_s;
    return c;
  }

  /// Wraps a handler with latency and status accounting.
  httplib::Server::Handler timed(
      std::string endpoint, std::function<void(const httplib::Request&, httplib::Response&)> fn) {
    return [this, endpoint = std::move(endpoint), fn = std::move(fn)](const httplib::Request& req,
                                                                      httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      fn(req, res);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      stats.observe_request(endpoint, res.status, took.count());
    };
  }

  void handle_documents(const httplib::Request& req, httplib::Response& res, doc_op op) {
    auto config = find(req.matches[1].str());
    if (!config) return send_error(res, config.error());
    auto parsed = detail::parse_request(req.body, {opt.max_documents, 1024});
    if (!parsed) return send_error(res, parsed.error());
    const int64_t clock = now();
    auto& docs = parsed->docs;
    // Documents given as text are fingerprinted first; too short ones are answered without
    // touching the index.
    std::vector<detail::doc_input> inputs;
    std::vector<std::size_t> slot(docs.size(), SIZE_MAX);
    inputs.reserve(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      std::optional<uint64_t> fp = docs[i].fingerprint;
      if (!fp) {
        auto r = texts.fingerprint(*config, docs[i].text);
        if (!r) return send_error(res, r.error());
        fp = *r;
      }
      if (!fp) continue;
      slot[i] = inputs.size();
      inputs.push_back({std::move(docs[i].id), *fp, docs[i].time.value_or(clock)});
    }
    std::vector<detail::doc_outcome> outcomes(inputs.size());
    if (!inputs.empty()) {
      auto st = store->apply(*config, op, inputs, clock, opt.max_matches, outcomes);
      if (!st) return send_error(res, st.error());
    }
    std::map<std::string, uint64_t> counts;
    std::string body = parsed->batch ? "{\"results\":[" : "";
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (i > 0) body.push_back(',');
      body += "{\"id\":";
      if (slot[i] == SIZE_MAX) {
        json::append_string(body, docs[i].id);
        body += ",\"status\":\"too_short\",\"matches\":[]}";
        ++counts["too_short"];
        continue;
      }
      const detail::doc_input& in = inputs[slot[i]];
      const detail::doc_outcome& out = outcomes[slot[i]];
      const char* outcome = outcome_name(op, out);
      ++counts[outcome];
      json::append_string(body, in.id);
      body += ",\"status\":\"";
      body += outcome;
      body += "\",\"fingerprint\":\"" + to_hex(in.fingerprint) + "\",\"matches\":[";
      for (std::size_t m = 0; m < out.matches.size(); ++m) {
        if (m > 0) body.push_back(',');
        body += "{\"id\":";
        json::append_string(body, out.matches[m].id);
        body += ",\"distance\":" + std::to_string(out.matches[m].distance) + "}";
      }
      body += "]}";
    }
    if (parsed->batch) body += "]}";
    for (const auto& [outcome, n] : counts) stats.count_documents(config->name, outcome, n);
    send_json(res, 200, body);
  }

  void handle_put(const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1].str();
    auto config = detail::config_from_json(req.body, defaults(name));
    if (!config) return send_error(res, config.error());
    config->name = name;
    if (auto st = store->create(*config); !st) return send_error(res, st.error());
    {
      std::unique_lock lock(collections_mu);
      collections[name] = *config;
    }
    send_json(res, 200, detail::to_json(*config));
  }

  void handle_stats(const httplib::Request& req, httplib::Response& res) {
    auto config = find(req.matches[1].str());
    if (!config) return send_error(res, config.error());
    auto s = store->stats(*config);
    if (!s) return send_error(res, s.error());
    std::string body = "{\"collection\":" + detail::to_json(*config);
    body += ",\"documents\":" + std::to_string(s->documents);
    body += ",\"inserted\":" + std::to_string(s->inserted);
    body += ",\"expired\":" + std::to_string(s->expired);
    body += ",\"deleted\":" + std::to_string(s->deleted);
    body += ",\"index_bytes\":" + std::to_string(s->index_bytes);
    body += ",\"index_segments\":" + std::to_string(s->index_segments) + "}";
    send_json(res, 200, body);
  }

  void handle_delete(const httplib::Request& req, httplib::Response& res) {
    auto config = find(req.matches[1].str());
    if (!config) return send_error(res, config.error());
    const std::string id = req.matches[2].str();
    auto removed = store->remove(*config, id);
    if (!removed) return send_error(res, removed.error());
    if (!*removed) return send_error(res, 404, "not_found", "no document \"" + id + "\"");
    std::string body = "{\"id\":";
    json::append_string(body, id);
    send_json(res, 200, body + ",\"deleted\":true}");
  }

  void handle_metrics(httplib::Response& res) {
    std::map<std::string, detail::metrics::collection_sample> samples;
    (void)refresh();
    std::vector<collection_config> all;
    {
      std::shared_lock lock(collections_mu);
      for (const auto& [name, c] : collections) all.push_back(c);
    }
    for (const auto& c : all) {
      if (auto s = store->stats(c))
        samples[c.name] = {s->documents, s->expired, s->deleted, s->index_bytes};
    }
    res.status = 200;
    res.set_content(stats.render(samples), "text/plain; version=0.0.4");
  }

  bool authorized(const httplib::Request& req) const {
    if (token.empty() || req.path == "/healthz") return true;
    const std::string header = req.get_header_value("Authorization");
    constexpr std::string_view scheme = "Bearer ";
    if (header.size() < scheme.size() || header.compare(0, scheme.size(), scheme) != 0) {
      return false;
    }
    return equal_secret(std::string_view(header).substr(scheme.size()), token);
  }

  void setup_routes() {
    const std::string coll = R"(/v1/([A-Za-z0-9_.\-]{1,64}))";
    http.Get("/healthz", timed("healthz", [](const httplib::Request&, httplib::Response& res) {
               send_json(res, 200, "{\"status\":\"ok\"}");
             }));
    http.Get("/metrics", timed("metrics", [this](const httplib::Request&, httplib::Response& res) {
               handle_metrics(res);
             }));
    http.Put(coll, timed("create", [this](const httplib::Request& req, httplib::Response& res) {
               handle_put(req, res);
             }));
    http.Get(coll + "/stats",
             timed("stats", [this](const httplib::Request& req, httplib::Response& res) {
               handle_stats(req, res);
             }));
    const std::pair<const char*, doc_op> ops[] = {{"check", doc_op::check},
                                                  {"insert", doc_op::insert},
                                                  {"check-insert", doc_op::check_insert}};
    for (const auto& [name, op] : ops) {
      http.Post(coll + "/" + name,
                timed(name, [this, op = op](const httplib::Request& req, httplib::Response& res) {
                  handle_documents(req, res, op);
                }));
    }
    http.Delete(coll + "/documents/(.+)",
                timed("delete", [this](const httplib::Request& req, httplib::Response& res) {
                  handle_delete(req, res);
                }));
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, "unauthorized", "missing or wrong bearer token");
      stats.observe_request("unauthorized", 401, 0.0);
      return httplib::Server::HandlerResponse::Handled;
    });
    // Answers httplib makes itself (no route, body too large, bad request line) get JSON too.
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      switch (res.status) {
        case 404:
          send_error(res, 404, "not_found", "no such endpoint: " + req.path);
          break;
        case 413:
          send_error(res, 413, "too_large",
                     "request body exceeds " + std::to_string(opt.max_body_bytes) + " bytes");
          break;
        default:
          send_error(res, res.status, "bad_request", "malformed HTTP request");
      }
      stats.observe_request("error", res.status, 0.0);
    });
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          send_error(res, 500, "internal", "unexpected error while handling the request");
        });
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
        if (auto st = store->expire(c, t); !st) {
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
  if (options.default_k < 0 || options.default_k > 7) {
    return make_error(errc::invalid_argument, "--k must be between 0 and 7");
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
      options.store.rfind("redis://", 0) == 0 ? detail::open_redis_backend(options.store)
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
  // cpp-httplib serves a keep-alive connection on one worker until the client closes it (or
  // leaves it idle for 5 s): a client beyond the pool waits that long for its first answer. So
  // the default is far above the core count; an idle worker costs only its stack.
  const int threads = s.opt.threads > 0
                          ? s.opt.threads
                          : std::max(64, 8 * static_cast<int>(std::thread::hardware_concurrency()));
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.http.set_payload_max_length(s.opt.max_body_bytes);
  s.http.set_read_timeout(s.opt.timeout_s, 0);
  s.http.set_write_timeout(s.opt.timeout_s, 0);
  s.http.set_keep_alive_max_count(1u << 20);
  s.http.set_tcp_nodelay(true);
  s.setup_routes();
  int port = s.opt.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.opt.host);
    if (port < 0) return make_error(errc::io_error, "cannot bind to " + s.opt.host);
  } else if (!s.http.bind_to_port(s.opt.host, port)) {
    return make_error(errc::io_error, "cannot bind to " + s.opt.host + ":" + std::to_string(port));
  }
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
  s.expirer = std::thread([&s] { s.expire_loop(); });
  return port;
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
    std::lock_guard lock(s.stop_mu);
    if (s.stopped) return;
    s.stopped = true;
    s.stopping = true;
  }
  s.stop_cv.notify_all();
  // httplib's stop() closes the listening socket; listen_after_bind() then lets the worker
  // threads finish the requests they hold before returning.
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  if (s.expirer.joinable()) s.expirer.join();
  s.store.reset();
}

void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace simdup
