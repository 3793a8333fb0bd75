// The HTTP server of `simdup serve` alone, without the index or the store: every request is
// answered with a small JSON body, either at once on the loop thread (--sync) or, like the
// store's group commit, by a "sync thread" that completes the replies gathered every --batch-us
// microseconds. Drive it with bench_service_load and read the server's CPU per request:
//
//   bench_http_echo --port 18080 --threads 2 &
//   bench_service_load --port 18080 --threads 16 --seconds 10 --server-pid $!
//
// Runs until SIGINT or SIGTERM.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>

#include "service/http_server.hpp"

namespace {

using namespace simdup::detail::http;

response answer() {
  response r;
  r.body = R"({"status":"new","matches":[]})";
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  server_options o;
  o.port = 18080;
  bool sync = false;
  int batch_us = 500;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--sync") {
      sync = true;
    } else if (i + 1 < argc && flag == "--port") {
      o.port = std::atoi(argv[++i]);
    } else if (i + 1 < argc && flag == "--threads") {
      o.threads = std::atoi(argv[++i]);
    } else if (i + 1 < argc && flag == "--batch-us") {
      batch_us = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: bench_http_echo [--port P] [--threads N] [--sync] [--batch-us U]\n");
      return 2;
    }
  }
  // Signals go to sigwait below, not to the server's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::mutex mu;
  std::vector<reply> pending;  // guarded by mu
  std::atomic<bool> done{false};
  std::thread syncer([&] {
    std::vector<reply> batch;
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(batch_us));
      {
        std::lock_guard lock(mu);
        batch.swap(pending);
      }
      for (auto& r : batch) r.send(answer());
      batch.clear();
    }
  });
  auto s = server::start(o, [&](request&&, reply r) {
    if (sync) {
      r.send(answer());
      return;
    }
    std::lock_guard lock(mu);
    pending.push_back(std::move(r));
  });
  if (!s) {
    std::fprintf(stderr, "bench_http_echo: %s\n", s.error().message.c_str());
    done = true;
    syncer.join();
    return 1;
  }
  std::printf("listening on %s:%d, %d loops, %s replies\n", o.host.c_str(), (*s)->port(), o.threads,
              sync ? "synchronous" : "batched");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  (*s)->stop();
  done = true;
  syncer.join();
  return 0;
}
