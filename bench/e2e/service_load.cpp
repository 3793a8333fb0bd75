// Load generator for `simdup serve`: keep-alive HTTP clients sending check-insert requests with
// random fingerprints (every document is new, so every request is a durable insert: the worst
// case), reporting throughput and latency percentiles. --op check measures the read path.
//
//   bench_service_load --port 8080 --collection bench --preload 10000000 --threads 16
//                      --seconds 20 --batch 1
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

namespace {

struct options {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string collection = "bench";
  std::string token;
  int threads = 16;
  double seconds = 10;
  int batch = 1;
  long long preload = 0;
  int k = 3;
  /// check-insert (default), insert or check.
  std::string op = "check-insert";
  /// Process id of the server, to report its CPU time; 0: not reported.
  long server_pid = 0;
};

/// CPU seconds (user + system) used so far by process `pid`, or -1 if it cannot be read.
double process_cpu_seconds(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double own_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string body_of(std::mt19937_64& rng, int batch, const std::string& prefix, long long& next) {
  auto doc = [&] {
    return "{\"id\":\"" + prefix + std::to_string(next++) + "\",\"fingerprint\":\"" + hex16(rng()) +
           "\"}";
  };
  if (batch == 1) return doc();
  std::string body = "{\"documents\":[";
  for (int i = 0; i < batch; ++i) {
    if (i > 0) body.push_back(',');
    body += doc();
  }
  return body + "]}";
}

/// Ids are unique per run, thread and phase: "<phase><run>.<thread>-<n>", so that repeated runs
/// against one server insert new documents instead of replacing earlier ones.
std::string id_prefix(char phase, uint32_t run, int thread) {
  std::string s(1, phase);
  s.append(std::to_string(run));
  s.push_back('.');
  s.append(std::to_string(thread));
  s.push_back('-');
  return s;
}

httplib::Headers headers(const options& o) {
  if (o.token.empty()) return {};
  return {{"Authorization", "Bearer " + o.token}};
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--host")
      o.host = value;
    else if (flag == "--port")
      o.port = std::atoi(value.c_str());
    else if (flag == "--collection")
      o.collection = value;
    else if (flag == "--token")
      o.token = value;
    else if (flag == "--threads")
      o.threads = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--seconds")
      o.seconds = std::atof(value.c_str());
    else if (flag == "--batch")
      o.batch = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--preload")
      o.preload = std::atoll(value.c_str());
    else if (flag == "--k")
      o.k = std::atoi(value.c_str());
    else if (flag == "--op")
      o.op = value;
    else if (flag == "--server-pid")
      o.server_pid = std::atol(value.c_str());
    else
      return false;
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: bench_service_load [--host H] [--port P] [--collection C] [--token T]\n"
                 "  [--threads N] [--seconds S] [--batch B] [--preload DOCS] [--k K]\n"
                 "  [--op check-insert|insert|check] [--server-pid PID]\n");
    return 2;
  }
  // Fingerprints and ids differ from run to run (random fingerprints repeated from an earlier
  // run would all be duplicates).
  const uint32_t run = std::random_device{}();
  const std::string base = "/v1/" + o.collection;
  {
    httplib::Client c(o.host, o.port);
    auto r = c.Put(base.c_str(), headers(o), "{\"k\":" + std::to_string(o.k) + ",\"window_s\":0}",
                   "application/json");
    if (!r || r->status != 200) {
      std::fprintf(stderr, "cannot create collection %s: %s\n", o.collection.c_str(),
                   r ? r->body.c_str() : httplib::to_string(r.error()).c_str());
      return 1;
    }
  }
  // Preload with batches of 1000 from all threads.
  if (o.preload > 0) {
    const auto start = std::chrono::steady_clock::now();
    std::atomic<long long> sent{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < std::min(o.threads, 4); ++t) {
      pool.emplace_back([&, t] {
        httplib::Client c(o.host, o.port);
        c.set_keep_alive(true);
        c.set_read_timeout(120, 0);  // a stall shows as latency, not as a failure
        c.set_tcp_nodelay(true);
        std::mt19937_64 rng(uint64_t{run} * 1000 + 500 + t);
        long long next = 0;
        const std::string prefix = id_prefix('p', run, t);
        while (sent.fetch_add(1000) < o.preload) {
          auto r = c.Post((base + "/insert").c_str(), headers(o), body_of(rng, 1000, prefix, next),
                          "application/json");
          if (!r || r->status != 200) {
            std::fprintf(stderr, "preload failed\n");
            std::exit(1);
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("preload: %lld documents in %.1f s (%.0f docs/s)\n", o.preload, took.count(),
                o.preload / took.count());
  }
  const double server_cpu0 = o.server_pid > 0 ? process_cpu_seconds(o.server_pid) : -1;
  const double own_cpu0 = own_cpu_seconds();
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(o.threads));
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.seconds);
  for (int t = 0; t < o.threads; ++t) {
    pool.emplace_back([&, t] {
      httplib::Client c(o.host, o.port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(120, 0);
      std::mt19937_64 rng(uint64_t{run} * 1000 + t);
      long long next = 0;
      const std::string prefix = id_prefix('l', run, t);
      auto& lat = latencies[static_cast<std::size_t>(t)];
      while (std::chrono::steady_clock::now() < deadline) {
        const std::string body = body_of(rng, o.batch, prefix, next);
        const auto t0 = std::chrono::steady_clock::now();
        auto r = c.Post((base + "/" + o.op).c_str(), headers(o), body, "application/json");
        const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        if (!r || r->status != 200) {
          failed = true;
          return;
        }
        lat.push_back(d.count());
      }
    });
  }
  for (auto& th : pool) th.join();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  if (failed || all.empty()) {
    std::fprintf(stderr, "requests failed\n");
    return 1;
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all[std::min(all.size() - 1, std::size_t(p * all.size()))]; };
  std::printf(
      "threads=%d batch=%d: %zu requests in %.1f s = %.0f requests/s, %.0f documents/s; "
      "latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
      o.threads, o.batch, all.size(), took.count(), all.size() / took.count(),
      all.size() * double(o.batch) / took.count(), pct(0.5) * 1e3, pct(0.99) * 1e3,
      all.back() * 1e3);
  const double docs = static_cast<double>(all.size()) * o.batch;
  std::printf("client cpu %.2f s (%.2f us/document)", own_cpu_seconds() - own_cpu0,
              (own_cpu_seconds() - own_cpu0) / docs * 1e6);
  if (server_cpu0 >= 0) {
    const double server_cpu = process_cpu_seconds(o.server_pid) - server_cpu0;
    std::printf(", server cpu %.2f s (%.2f us/document)", server_cpu, server_cpu / docs * 1e6);
  }
  std::printf("\n");
  return 0;
}
