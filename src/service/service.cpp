// HTTP adapter of the dedup service: its lifetime, the routing of requests to the handlers of each
// resource (service_impl.hpp), authentication, and the expiry loop. Algorithms live in the store
// (backend) and fingerprint components.
#include <simdup/json.hpp>
#include <simdup/plan.hpp>

#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "service/service_impl.hpp"
#include "util/ascii.hpp"
#include "util/cpu.hpp"

namespace simdup {

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

}  // namespace

void service::impl::exchange::fail(const error_info& err) {
  std::string body = http::error_body(errc_name(err.code), err.message);
  if (err.parameter) {
    // The setting the error is about, for clients that name it in their own words.
    body.resize(body.size() - 2);  // reopen {"error":{...}}
    body += ",\"parameter\":{\"name\":";
    json::append_string(body, err.parameter->name);
    body += ",\"value\":";
    json::append_string(body, err.parameter->value);
    body += ",\"allowed\":";
    json::append_string(body, err.parameter->allowed);
    body += "}}}";
  }
  send(http_status(err.code), std::move(body));
}

int64_t service::impl::now() const {
  if (!opt.clock_file.empty()) {
    std::ifstream in(opt.clock_file);
    long long t = 0;
    if (in >> t) return t;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

result<collection_config> service::impl::find(const std::string& name) {
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

status service::impl::refresh() {
  auto all = store->collections();
  if (!all) return std::move(all).error();
  std::map<std::string, collection_config> fresh;
  for (auto& c : *all) fresh[c.name] = std::move(c);
  std::unique_lock lock(collections_mu);
  collections.swap(fresh);
  return {};
}

std::vector<collection_config> service::impl::all_collections() {
  std::vector<collection_config> all;
  std::shared_lock lock(collections_mu);
  for (const auto& [name, c] : collections) all.push_back(c);
  return all;
}

collection_config service::impl::defaults(const std::string& name) const {
  collection_config c;
  c.name = name;
  c.k = opt.default_k;
  c.verify = opt.default_verify;
  c.window_s = opt.default_window_s;
  c.sketch = opt.default_sketch;
  c.minhash = opt.default_minhash;
  return c;
}

bool service::impl::authorized(const http::request& req) const {
  if (token.empty()) return true;
  // The scheme is case-insensitive (RFC 9110 11.1); the token is not.
  constexpr std::string_view scheme = "bearer ";
  const std::string_view header = req.authorization;
  if (!detail::iequals(header.substr(0, scheme.size()), scheme)) return false;
  return equal_secret(header.substr(scheme.size()), token);
}

void service::impl::serve(http::request&& req, http::reply reply) {
  exchange ex{this, "", std::chrono::steady_clock::now(), std::move(reply)};
  route(std::move(req), std::move(ex));
}

void service::impl::route(http::request&& req, exchange ex) {
  const std::string_view path = req.path;
  if (path == "/healthz") return route_health(req, std::move(ex));
  if (!authorized(req)) {
    ex.endpoint = "unauthorized";
    return ex.send(401, http::error_body("unauthorized", "missing or wrong bearer token"),
                   "application/json", {{"WWW-Authenticate", "Bearer"}});
  }
  if (path == "/metrics") return route_metrics(req, std::move(ex));
  if (path == "/v1" || path == "/v1/") {
    ex.endpoint = "collections";
    if (req.method != "GET") return wrong_method(req, ex, "GET");
    return handle_list(std::move(ex));
  }
  // Ahead of the collection routes: "openapi.json" cannot name a collection.
  if (path == "/v1/openapi.json") return route_openapi(req, std::move(ex));
  constexpr std::string_view v1 = "/v1/";
  if (path.substr(0, v1.size()) == v1) return route_collection(req, std::move(ex));
  no_endpoint(req, std::move(ex));
}

void service::impl::wrong_method(const http::request& req, exchange& ex, const char* allowed) {
  ex.endpoint = "error";
  ex.send(405,
          http::error_body("method_not_allowed", req.method + " is not allowed on " + req.path),
          "application/json", {{"Allow", allowed}});
}

void service::impl::no_endpoint(const http::request& req, exchange ex) {
  ex.endpoint = "error";
  ex.fail(404, "not_found", "no such endpoint: " + req.path);
}

void service::impl::expire_loop() {
  std::unique_lock lock(stop_mu);
  auto last_trim = std::chrono::steady_clock::now();
  while (!stopping) {
    stop_cv.wait_for(lock, std::chrono::milliseconds(opt.expire_interval_ms));
    if (stopping) break;
    lock.unlock();
    const std::vector<collection_config> all = all_collections();
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

service::service(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

service::~service() {
  stop();
}

result<std::unique_ptr<service>> service::create(const service_options& options) {
  auto p = std::make_unique<impl>();
  p->opt = options;
  if (status s = validate_k(options.default_k, "default_k"); !s) return s.error();
  if (!(options.default_verify >= 0 && options.default_verify <= 1)) {
    const std::string value = std::to_string(options.default_verify);
    return invalid_parameter({.name = "default_verify",
                              .value = value,
                              .allowed = "0 (off) or a threshold in (0, 1]",
                              .reason = "must be 0 (off) or a threshold in (0, 1], got " + value});
  }
  // The sketch and bands as a collection's settings would be checked, named as the defaults.
  if (status s = detail::validate(p->defaults("default")); !s) {
    error_info e = s.error();
    if (e.parameter) e.parameter->name = "default_" + e.parameter->name;
    return e;
  }
  if (options.max_documents == 0 || options.max_body_bytes == 0 || options.max_matches == 0) {
    return make_error(errc::invalid_argument, "limits must be positive");
  }
  if (!options.export_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.export_dir, ec);
    if (ec || !std::filesystem::is_directory(options.export_dir, ec)) {
      return invalid_parameter({.name = "export_dir",
                                .value = options.export_dir,
                                .allowed = "a directory that exists or can be created",
                                .reason = options.export_dir +
                                          ": not a directory that can be created" +
                                          (ec ? ": " + ec.message() : std::string())});
    }
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
  const int cores = static_cast<int>(detail::available_cpus());
  o.threads =
      s.opt.threads > 0 ? s.opt.threads : std::min(256, s.redis_store() ? 4 * cores : cores);
  s.event_loops = o.threads;
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
  // Exports in progress fail now, and answer so, rather than hold up the stop.
  s.exports_stopping = true;
  // Stops accepting and waits until every request received has been answered (their writes
  // synced), before the store closes.
  if (s.http_server) s.http_server->stop();
  s.join_exports();
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
