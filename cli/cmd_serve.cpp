// `simdup serve`: the online dedup service (docs/service.md).
#include <simdup/duration.hpp>
#include <simdup/plan.hpp>
#include <simdup/service.hpp>
#include <simdup/verify.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

namespace simdup::cli {
namespace {

struct serve_args {
  service_options opt;
  std::string listen = "127.0.0.1:8080";
  std::string window = "7d";
  std::string verify = "jaccard:0.8";
  std::string minhash = "10x6";
  std::vector<std::string> collections;
  std::vector<std::string> imports;  // COLLECTION=DIR
};

int run_serve(serve_args& a) {
  if (a.opt.data_dir.empty() && !a.opt.store.starts_with("redis://")) {
    print_error("serve",
                "--data DIR is required (the directory of the embedded store), unless "
                "--store redis://HOST:PORT");
    return exit_usage;
  }
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos) {
    print_error("serve", "--listen " + a.listen + ": expected HOST:PORT");
    return exit_usage;
  }
  a.opt.host = a.listen.substr(0, colon);
  try {
    a.opt.port = std::stoi(a.listen.substr(colon + 1));
  } catch (const std::exception&) {
    a.opt.port = -1;
  }
  if (a.opt.port < 0 || a.opt.port > 65535) {
    print_error("serve", "--listen " + a.listen + ": the port must be a number from 0 to 65535");
    return exit_usage;
  }
  auto window = parse_duration(a.window);
  if (!window) {
    print_error("serve", "--window: " + window.error().message);
    return exit_usage;
  }
  a.opt.default_window_s = *window;
  a.opt.default_verify = 0;  // "off"
  if (a.verify != "off") {
    auto verify = parse_verify_spec(a.verify);
    if (!verify) {
      print_error("serve",
                  "--verify: must be jaccard:T with T in (0, 1] or off, got \"" + a.verify + "\"");
      return exit_usage;
    }
    a.opt.default_verify = verify->threshold;
  }
  auto minhash = parse_minhash_spec(a.minhash);
  if (!minhash) {
    print_error("serve", "--" + minhash.error().message);  // "minhash: expected ..."
    return exit_usage;
  }
  a.opt.default_minhash = *minhash;

  // Before any thread exists, so that every thread inherits the mask and SIGTERM reaches the
  // sigwait in run_until_signal.
  block_stop_signals();
  auto svc = service::create(a.opt);
  if (!svc) {
    print_error("serve", flag_message(svc.error()));
    return svc.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  for (const auto& name : a.collections) {
    if (auto st = (*svc)->add_collection(name); !st) {
      print_error("serve", "--collection " + name + ": " + st.error().message);
      return exit_failure;
    }
  }
  for (const auto& spec : a.imports) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      print_error("serve", "--import takes COLLECTION=DIR, got \"" + spec + "\"");
      return exit_usage;
    }
    const std::string name = spec.substr(0, eq), dir = spec.substr(eq + 1);
    auto counts = (*svc)->import_index(name, dir, [&](uint64_t done, uint64_t total) {
      if (done == total || done % 100000 < 1000) {
        std::fprintf(stderr, "simdup serve: importing %s into %s: %llu of %llu\n", dir.c_str(),
                     name.c_str(), static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(total));
      }
    });
    if (!counts) {
      print_error("serve", "--import " + spec + ": " + counts.error().message);
      return counts.error().code == errc::invalid_argument ? exit_usage : exit_failure;
    }
    std::fprintf(stderr,
                 "simdup serve: imported %llu documents of %s into %s (%llu without a fingerprint "
                 "left out: the service has no exact layer)\n",
                 static_cast<unsigned long long>(counts->imported), dir.c_str(), name.c_str(),
                 static_cast<unsigned long long>(counts->without_fingerprint));
  }
  auto port = (*svc)->start();
  if (!port) {
    print_error("serve", port.error().message);
    return exit_failure;
  }
  std::printf("listening on %s:%d\n", a.opt.host.c_str(), *port);
  std::fflush(stdout);
  (*svc)->run_until_signal();
  std::fprintf(stderr, "simdup serve: stopped\n");
  return exit_ok;
}

void setup_serve(CLI::App& app, int& rc) {
  auto args = std::make_shared<serve_args>();
  auto* cmd = app.add_subcommand("serve", "Run the online dedup service (HTTP/JSON)");
  cmd->add_option("--data", args->opt.data_dir,
                  "Directory of the embedded RocksDB store (required unless --store redis://)");
  cmd->add_option("--store", args->opt.store,
                  "rocksdb (default, under --data) or redis://HOST:PORT[/DB] (shared)")
      ->capture_default_str();
  cmd->add_option("--listen", args->listen, "HOST:PORT to bind; port 0 picks a free one")
      ->capture_default_str();
  cmd->add_option("--k", args->opt.default_k,
                  "Default Hamming distance of new collections (inclusive, 0-" +
                      std::to_string(max_index_k) + ")")
      ->check(distance_k(max_index_k))
      ->capture_default_str();
  cmd->add_option("--verify", args->verify,
                  "Default verification of new collections: jaccard:T (a candidate within k "
                  "is a duplicate only if the Jaccard of the shingle sets is >= T) or off")
      ->capture_default_str();
  cmd->add_option("--sketch", args->opt.default_sketch,
                  "Default sketch of new collections: shingle hashes kept per text document to "
                  "verify with (its bottom-k sketch; texts with fewer are compared exactly)")
      ->check(CLI::Range(16, 4096).description("16..4096"))
      ->capture_default_str();
  cmd->add_option("--minhash", args->minhash,
                  "Default MinHash bands of new collections: BANDSxROWS, a second way to find "
                  "candidates of text documents beside the distance (always verified), or off")
      ->capture_default_str();
  cmd->add_option("--window", args->window,
                  "Default window of new collections (e.g. 7d, 12h, 3600s; 0 = forever)")
      ->capture_default_str();
  cmd->add_option("--collection", args->collections,
                  "Create this collection with the defaults at start (repeatable)");
  cmd->add_option("--import", args->imports,
                  "COLLECTION=DIR: before serving, insert the documents of a dedup run's index "
                  "(DIR, its output directory, or DIR/index, or a merged index) into the "
                  "collection (create it with --collection); repeatable. Their time is the "
                  "import's, for the window")
      ->type_name("COLLECTION=DIR")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--export-dir", args->opt.export_dir,
                  "Let POST /v1/COLLECTION/export write a collection's documents as a dedup "
                  "index to DIR/NAME (created if missing); without it the route is refused")
      ->type_name("DIR");
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
                  "Event-loop threads serving HTTP (0: one per usable core; 4 per core with Redis)")
      ->check(integer_range(0, 256, "event-loop threads (0: picked from the cores)"))
      ->capture_default_str();
  cmd->add_option("--expire-interval-ms", args->opt.expire_interval_ms,
                  "How often expired documents are removed, in milliseconds")
      ->capture_default_str();
  cmd->add_option("--snapshot-docs", args->opt.snapshot_documents,
                  "Save a collection's index as a segment file after this many changes, once "
                  "idle (0: only the first file, every ten minutes with changes, and at "
                  "exit); restarts load it instead of rebuilding")
      ->capture_default_str();
  cmd->add_option("--clock-file", args->opt.clock_file,
                  "TEST ONLY: read the current time (epoch seconds) from this file");
  cmd->callback([args, &rc] { rc = run_serve(*args); });
}

SIMDUP_REGISTER_COMMAND(60, setup_serve);

}  // namespace
}  // namespace simdup::cli
