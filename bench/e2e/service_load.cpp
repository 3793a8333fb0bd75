// Load generator for `simdup serve`: keep-alive HTTP connections sending check-insert requests
// with random fingerprints (every document is new, so every request is a durable insert: the
// worst case), reporting throughput and latency percentiles. --op check measures the read path.
//
//   bench_service_load --port 8080 --collection bench --preload 10000000 --threads 16
//                      --seconds 20 --batch 1
//
// --text N sends documents as text instead (N random words of a 5,000-word vocabulary each, so
// every document is new, yet texts share common shingles and their fingerprints are nearer
// than random ones): the server then fingerprints them and, with --verify jaccard:T, keeps and
// compares their shingle sketches. Measure verification on against off with the same --text.
//
// --threads is the number of connections, each with one request in flight (16 crawler
// processes). They are driven by --io-threads poll() loops (default 2) with a minimal HTTP/1.1
// client, like wrk: on a 2-core machine shared with the server, one blocking client thread per
// connection would cost the client more CPU per request than the server spends.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "process_stats.hpp"

namespace {

struct options {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string collection = "bench";
  std::string token;
  /// Concurrent connections of the measured phase, one request in flight on each.
  int threads = 16;
  /// Threads driving those connections.
  int io_threads = 2;
  double seconds = 10;
  int batch = 1;
  long long preload = 0;
  int k = 3;
  /// The collection's verify setting: "off" (default) or "jaccard:T".
  std::string verify = "off";
  /// The collection's minhash and sketch settings; empty: the server's defaults (and a build
  /// from before these settings accepts the request).
  std::string minhash, sketch;
  /// Words per document sent as text; 0 (default): random fingerprints.
  int text_words = 0;
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

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The --text vocabulary: 5,000 lower-case words of 3 to 9 letters, the same in every run.
const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> words = [] {
    std::mt19937_64 rng(42);
    std::vector<std::string> out(5000);
    for (auto& w : out) {
      const std::size_t n = 3 + rng() % 7;
      for (std::size_t i = 0; i < n; ++i) w.push_back(static_cast<char>('a' + rng() % 26));
    }
    return out;
  }();
  return words;
}

std::string body_of(std::mt19937_64& rng, int batch, const std::string& prefix, long long& next,
                    int text_words) {
  auto doc = [&] {
    std::string d = "{\"id\":\"" + prefix + std::to_string(next++);
    if (text_words == 0) return d + "\",\"fingerprint\":\"" + hex16(rng()) + "\"}";
    d += "\",\"text\":\"";
    const auto& words = vocabulary();
    for (int w = 0; w < text_words; ++w) {
      if (w > 0) d.push_back(' ');
      d += words[rng() % words.size()];
    }
    return d + "\"}";
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

/// A blocking TCP connection to host:port with Nagle off, or -1.
int connect_to(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/// Bytes of the response at the start of `in` as its head announces them: 0 while the head is
/// incomplete, -1 for a head without a Content-Length (or not HTTP/1.1).
long framed_length(const std::string& in) {
  const auto end = in.find("\r\n\r\n");
  if (end == std::string::npos) return 0;
  if (in.compare(0, 9, "HTTP/1.1 ") != 0) return -1;
  std::string head = in.substr(0, end);
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const auto at = head.find("\r\ncontent-length:");
  if (at == std::string::npos) return -1;
  return static_cast<long>(end + 4) + std::atol(head.c_str() + at + 17);
}

/// Length of the complete response at the start of `in`: 0 while incomplete, -1 for an answer
/// other than 200 or one without a Content-Length.
long response_length(const std::string& in) {
  const long total = framed_length(in);
  if (total <= 0) return total;
  if (in.compare(0, 12, "HTTP/1.1 200") != 0) return -1;
  return static_cast<long>(in.size()) >= total ? total : 0;
}

/// One keep-alive connection of the measured phase, with one request in flight.
struct connection {
  int fd = -1;
  std::mt19937_64 rng;
  std::string prefix;
  long long next = 0;
  std::string in;
  std::chrono::steady_clock::time_point sent_at;
  /// Documents answered "duplicate" (with --text, near texts of the vocabulary can be).
  long long duplicates = 0;
};

bool send_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string request_head(const options& o, const char* method, const std::string& path,
                         std::size_t body_bytes) {
  std::string head = std::string(method) + " " + path + " HTTP/1.1\r\nHost: " + o.host +
                     "\r\nContent-Type: application/json\r\n";
  if (!o.token.empty()) head += "Authorization: Bearer " + o.token + "\r\n";
  return head + "Content-Length: " + std::to_string(body_bytes) + "\r\n\r\n";
}

/// Drives `conns` until the deadline: sends a request on each, and the next one as soon as its
/// answer is complete; appends each request's latency in seconds. False on any failure.
bool drive(const options& o, const std::string& path, std::vector<connection*> conns,
           std::chrono::steady_clock::time_point deadline, std::vector<double>& latencies) {
  const auto send_next = [&](connection& c) {
    const std::string body = body_of(c.rng, o.batch, c.prefix, c.next, o.text_words);
    const std::string req = request_head(o, "POST", path, body.size()) + body;
    c.sent_at = std::chrono::steady_clock::now();
    return send_all(c.fd, req);
  };
  std::vector<pollfd> fds(conns.size());
  for (std::size_t i = 0; i < conns.size(); ++i) {
    fds[i] = {conns[i]->fd, POLLIN, 0};
    if (!send_next(*conns[i])) return false;
  }
  std::size_t active = conns.size();
  char buf[65536];
  while (active > 0) {
    if (poll(fds.data(), fds.size(), 1000) < 0) return false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      connection& c = *conns[i];
      const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      c.in.append(buf, static_cast<std::size_t>(n));
      const long len = response_length(c.in);
      if (len < 0) {
        std::fprintf(stderr, "unexpected answer: %.200s\n", c.in.c_str());
        return false;
      }
      if (len == 0) continue;
      const auto now = std::chrono::steady_clock::now();
      latencies.push_back(std::chrono::duration<double>(now - c.sent_at).count());
      constexpr std::string_view duplicate = "\"status\":\"duplicate\"";
      for (auto at = c.in.find(duplicate); at < static_cast<std::size_t>(len);
           at = c.in.find(duplicate, at + 1)) {
        ++c.duplicates;
      }
      c.in.erase(0, static_cast<std::size_t>(len));
      if (now < deadline) {
        if (!send_next(c)) return false;
      } else {
        fds[i].fd = -1;
        --active;
      }
    }
  }
  return true;
}

/// One request on a blocking keep-alive connection: the answer's status code (0 when the
/// connection failed or the answer is malformed), its whole text in `answer`.
int round_trip(int fd, const options& o, const char* method, const std::string& path,
               const std::string& body, std::string& answer) {
  if (!send_all(fd, request_head(o, method, path, body.size()) + body)) return 0;
  answer.clear();
  char buf[65536];
  for (;;) {
    const long total = framed_length(answer);
    if (total < 0) return 0;
    if (total > 0 && static_cast<long>(answer.size()) >= total) {
      return std::atoi(answer.c_str() + 9);
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    answer.append(buf, static_cast<std::size_t>(n));
  }
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
    else if (flag == "--io-threads")
      o.io_threads = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--seconds")
      o.seconds = std::atof(value.c_str());
    else if (flag == "--batch")
      o.batch = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--preload")
      o.preload = std::atoll(value.c_str());
    else if (flag == "--k")
      o.k = std::atoi(value.c_str());
    else if (flag == "--verify")
      o.verify = value;
    else if (flag == "--minhash")
      o.minhash = value;
    else if (flag == "--sketch")
      o.sketch = value;
    else if (flag == "--text")
      o.text_words = std::max(0, std::atoi(value.c_str()));
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
    std::fprintf(
        stderr,
        "usage: bench_service_load [--host H] [--port P] [--collection C] [--token T]\n"
        "  [--threads N] [--io-threads N] [--seconds S] [--batch B] [--preload DOCS] [--k K]\n"
        "  [--verify off|jaccard:T] [--minhash BANDSxROWS|off] [--sketch HASHES]\n"
        "  [--text WORDS] [--op check-insert|insert|check]\n"
        "  [--server-pid PID]\n");
    return 2;
  }
  // Fingerprints and ids differ from run to run (random fingerprints repeated from an earlier
  // run would all be duplicates).
  const uint32_t run = std::random_device{}();
  const std::string base = "/v1/" + o.collection;
  {
    const int fd = connect_to(o.host, o.port);
    std::string answer;
    std::string settings =
        "{\"k\":" + std::to_string(o.k) + ",\"window_s\":0,\"verify\":\"" + o.verify + "\"";
    if (!o.minhash.empty()) settings += ",\"minhash\":\"" + o.minhash + "\"";
    if (!o.sketch.empty()) settings += ",\"sketch\":" + o.sketch;
    settings += "}";
    const int code = fd < 0 ? 0 : round_trip(fd, o, "PUT", base, settings, answer);
    if (fd >= 0) close(fd);
    if (code != 200) {
      std::fprintf(stderr, "cannot create collection %s: %s\n", o.collection.c_str(),
                   code == 0 ? "no answer" : answer.c_str());
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
        const int fd = connect_to(o.host, o.port);
        std::string answer;
        std::mt19937_64 rng(uint64_t{run} * 1000 + 500 + t);
        long long next = 0;
        const std::string prefix = id_prefix('p', run, t);
        while (sent.fetch_add(1000) < o.preload) {
          if (fd < 0 || round_trip(fd, o, "POST", base + "/insert",
                                   body_of(rng, 1000, prefix, next, o.text_words), answer) != 200) {
            std::fprintf(stderr, "preload failed: %.200s\n", answer.c_str());
            std::exit(1);
          }
        }
        close(fd);
      });
    }
    for (auto& th : pool) th.join();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("preload: %lld documents in %.1f s (%.0f docs/s)\n", o.preload, took.count(),
                o.preload / took.count());
  }
  const double server_cpu0 = o.server_pid > 0 ? process_cpu_seconds(o.server_pid) : -1;
  const double own_cpu0 = simdup::bench::cpu_seconds();
  std::vector<connection> conns(static_cast<std::size_t>(o.threads));
  for (int t = 0; t < o.threads; ++t) {
    connection& c = conns[static_cast<std::size_t>(t)];
    c.fd = connect_to(o.host, o.port);
    if (c.fd < 0) {
      std::fprintf(stderr, "cannot connect to %s:%d\n", o.host.c_str(), o.port);
      return 1;
    }
    c.rng.seed(uint64_t{run} * 1000 + static_cast<uint64_t>(t));
    c.prefix = id_prefix('l', run, t);
  }
  const int io_threads = std::min(o.io_threads, o.threads);
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(io_threads));
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  const std::string path = base + "/" + o.op;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(o.seconds));
  for (int t = 0; t < io_threads; ++t) {
    std::vector<connection*> mine;
    for (int i = t; i < o.threads; i += io_threads)
      mine.push_back(&conns[static_cast<std::size_t>(i)]);
    pool.emplace_back([&, t, mine] {
      if (!drive(o, path, mine, deadline, latencies[static_cast<std::size_t>(t)])) failed = true;
    });
  }
  for (auto& th : pool) th.join();
  long long duplicates = 0;
  for (auto& c : conns) {
    close(c.fd);
    duplicates += c.duplicates;
  }
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
  const double client_cpu = simdup::bench::cpu_seconds() - own_cpu0;
  std::printf("duplicates %lld; client cpu %.2f s (%.2f us/document)", duplicates, client_cpu,
              client_cpu / docs * 1e6);
  if (server_cpu0 >= 0) {
    const double server_cpu = process_cpu_seconds(o.server_pid) - server_cpu0;
    std::printf(", server cpu %.2f s (%.2f us/document)", server_cpu, server_cpu / docs * 1e6);
  }
  std::printf("\n");
  return 0;
}
