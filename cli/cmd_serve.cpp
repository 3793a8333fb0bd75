// `simdup serve`: the online dedup service (docs/service.md).
#include <simdup/service.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "store/backend.hpp"

namespace simdup::cli {
namespace {

struct serve_args {
  service_options opt;
  std::string listen = "127.0.0.1:8080";
  std::string window = "7d";
  std::vector<std::string> collections;
};

int run_serve(serve_args& a) {
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "simdup serve: --listen must be HOST:PORT\n");
    return exit_usage;
  }
  a.opt.host = a.listen.substr(0, colon);
  try {
    a.opt.port = std::stoi(a.listen.substr(colon + 1));
  } catch (const std::exception&) {
    a.opt.port = -1;
  }
  if (a.opt.port < 0 || a.opt.port > 65535) {
    std::fprintf(stderr, "simdup serve: --listen %s: bad port\n", a.listen.c_str());
    return exit_usage;
  }
  auto window = detail::parse_duration(a.window);
  if (!window) {
    std::fprintf(stderr, "simdup serve: --window: %s\n", window.error().message.c_str());
    return exit_usage;
  }
  a.opt.default_window_s = *window;

  // Before any thread exists, so that every thread inherits the mask and SIGTERM reaches the
  // sigwait in run_until_signal.
  block_stop_signals();
  auto svc = service::create(a.opt);
  if (!svc) {
    std::fprintf(stderr, "simdup serve: %s\n", svc.error().message.c_str());
    return exit_failure;
  }
  for (const auto& name : a.collections) {
    if (auto st = (*svc)->add_collection(name); !st) {
      std::fprintf(stderr, "simdup serve: --collection %s: %s\n", name.c_str(),
                   st.error().message.c_str());
      return exit_failure;
    }
  }
  auto port = (*svc)->start();
  if (!port) {
    std::fprintf(stderr, "simdup serve: %s\n", port.error().message.c_str());
    return exit_failure;
  }
  std::printf("listening on %s:%d\n", a.opt.host.c_str(), *port);
  std::fflush(stdout);
  (*svc)->run_until_signal();
  std::fprintf(stderr, "simdup serve: stopped\n");
  return exit_ok;
}

void setup(CLI::App& app, int& rc) {
  auto args = std::make_shared<serve_args>();
  auto* cmd = app.add_subcommand("serve", "Run the online dedup service (HTTP/JSON)");
  cmd->add_option("--data", args->opt.data_dir, "Directory of the embedded RocksDB store");
  cmd->add_option("--store", args->opt.store,
                  "rocksdb (default, under --data) or redis://HOST:PORT[/DB] (shared)")
      ->capture_default_str();
  cmd->add_option("--listen", args->listen, "HOST:PORT to bind; port 0 picks a free one")
      ->capture_default_str();
  cmd->add_option("--k", args->opt.default_k,
                  "Default Hamming distance of new collections (inclusive, 0-7)")
      ->capture_default_str();
  cmd->add_option("--window", args->window,
                  "Default window of new collections (e.g. 7d, 12h, 3600s; 0 = forever)")
      ->capture_default_str();
  cmd->add_option("--collection", args->collections,
                  "Create this collection with the defaults at start (repeatable)");
  cmd->add_option("--token-file", args->opt.token_file,
                  "File with the bearer token clients must send (Authorization: Bearer ...)");
  cmd->add_option("--max-body", args->opt.max_body_bytes, "Largest request body in bytes")
      ->capture_default_str();
  cmd->add_option("--max-docs", args->opt.max_documents, "Most documents per request")
      ->capture_default_str();
  cmd->add_option("--max-matches", args->opt.max_matches, "Most matches listed per document")
      ->capture_default_str();
  cmd->add_option("--timeout", args->opt.timeout_s,
                  "Seconds a connection may idle or take to send a request")
      ->capture_default_str();
  cmd->add_option("--threads", args->opt.threads,
                  "Event-loop threads serving HTTP (0: cores; 4 x cores with Redis)")
      ->capture_default_str();
  cmd->add_option("--expire-interval-ms", args->opt.expire_interval_ms,
                  "How often expired documents are removed, in milliseconds")
      ->capture_default_str();
  cmd->add_option("--snapshot-docs", args->opt.snapshot_documents,
                  "Save a collection's index as a segment file after this many changes "
                  "(0: only at exit); restarts load it instead of rebuilding")
      ->capture_default_str();
  cmd->add_option("--clock-file", args->opt.clock_file,
                  "TEST ONLY: read the current time (epoch seconds) from this file");
  cmd->callback([args, &rc] { rc = run_serve(*args); });
}

SIMDUP_REGISTER_COMMAND(60, setup);

}  // namespace
}  // namespace simdup::cli
