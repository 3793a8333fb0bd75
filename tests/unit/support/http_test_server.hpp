// A loopback HTTP client, a server fixture routing by path, and the helpers the tests of the
// epoll HTTP server share (tests/unit/service/http_server*_test.cpp).
#pragma once

#include "service/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace simdup::detail::http::http_test {

using namespace std::chrono_literals;

struct http_answer {
  int status = 0;
  std::string head;  ///< status line and headers, lower-cased
  std::string body;
  bool has(std::string_view header_line) const {
    return head.find(std::string(header_line) + "\r\n") != std::string::npos;
  }
};

inline constexpr int kReadGuardSeconds = 30;

/// A blocking loopback client that reads answers by Content-Length.
class client {
 public:
  /// `rcvbuf`: a receive buffer size in bytes (0: the system's).
  explicit client(int port, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    // Only a guard against a hung test: every wait here ends on an event (an answer, EOF), so
    // a loaded machine makes a test slower, never wrong.
    timeval tv{kReadGuardSeconds, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~client() { ::close(fd_); }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  bool connected() const { return connected_; }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  /// One non-blocking send: bytes taken, or -1 if the socket takes none now.
  ssize_t send_some(std::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  /// The next answer, or nullopt on EOF, error or the read guard. `no_body`: an answer to HEAD.
  std::optional<http_answer> read(bool no_body = false) {
    std::size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    http_answer a;
    a.head = buf_.substr(0, end + 2);
    for (auto& ch : a.head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    a.status = std::stoi(a.head.substr(9, 3));
    std::size_t length = 0;
    if (const auto p = a.head.find("content-length: "); p != std::string::npos && !no_body) {
      length = std::stoul(a.head.substr(p + 16));
    }
    buf_.erase(0, end + 4);
    while (buf_.size() < length) {
      if (!fill()) return std::nullopt;
    }
    a.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return a;
  }

  /// True once bytes have arrived that were not read yet (they stay unread).
  bool has_data() {
    char byte;
    return !buf_.empty() || ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
  }

  /// Reads and discards what arrives; 0 on EOF, error or timeout.
  std::size_t drain() {
    const std::size_t had = buf_.size();
    buf_.clear();
    if (had > 0) return had;
    return fill() ? drain() : 0;
  }

  /// True if the server closed the connection (EOF), with nothing more to read; false on data
  /// or when the read guard expires first.
  bool closed_by_server() { return buf_.empty() && !fill() && eof_; }

 private:
  bool fill() {
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = n == 0;
      return false;
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

/// Completes replies on its own thread, in batches, like the store's sync thread.
class completer {
 public:
  completer()
      : thread_([this] {
          std::unique_lock lock(mu_);
          for (;;) {
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            auto batch = std::move(queue_);
            queue_.clear();
            lock.unlock();
            std::this_thread::sleep_for(200us);  // the "fsync"
            for (auto& [r, resp] : batch) r.send(std::move(resp));
            lock.lock();
          }
        }) {}
  ~completer() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void add(reply r, response resp) {
    {
      std::lock_guard lock(mu_);
      queue_.emplace_back(std::move(r), std::move(resp));
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<reply, response>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

/// Holds replies for a test to complete by hand.
struct held_replies {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<reply> replies;
  void add(reply r) {
    {
      std::lock_guard lock(mu);
      replies.push_back(std::move(r));
    }
    cv.notify_all();
  }
  reply take() {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(kReadGuardSeconds), [&] { return !replies.empty(); });
    if (replies.empty()) return {};
    reply r = std::move(replies.front());
    replies.erase(replies.begin());
    return r;
  }
};

/// A clock the test advances by hand (server_options::clock): the server's timeouts then
/// follow the test's steps, however slowly a loaded machine runs them.
struct manual_clock {
  std::atomic<std::chrono::steady_clock::rep> ticks{0};
  std::atomic<long> reads{0};
  std::function<std::chrono::steady_clock::time_point()> fn() {
    return [this] {
      reads.fetch_add(1);
      return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks));
    };
  }
  void advance(std::chrono::milliseconds by) {
    ticks.fetch_add(std::chrono::duration_cast<std::chrono::steady_clock::duration>(by).count());
  }
};

/// Polls `done` until it holds; false only if it still does not after the guard (a hang).
template <typename Pred>
inline bool eventually(Pred done) {
  const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(kReadGuardSeconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > guard) return false;
    std::this_thread::sleep_for(5ms);  // a poll interval, not a wait for something to happen
  }
  return true;
}

inline response text(std::string body) {
  response r;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

/// n bytes of a repeating pattern, to check large bodies arrive intact.
inline std::string pattern(std::size_t n) {
  std::string s(n, ' ');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return s;
}

/// A server whose handler routes by path: /echo (sync), /async (completer thread), /drop (no
/// send), /throw, /hold (held for the test), /big?N (N bytes), /len (body size and check).
struct fixture {
  completer done;
  held_replies held;
  std::mutex rejected_mu;
  std::vector<int> rejected;
  std::unique_ptr<server> srv;

  explicit fixture(server_options o = {}) {
    o.on_rejected = [this](int status) {
      std::lock_guard lock(rejected_mu);
      rejected.push_back(status);
    };
    auto s = server::start(std::move(o), [this](request&& req, reply r) {
      const std::string echo = req.method + " " + req.path + "?" + req.query + " " + req.body;
      if (req.path == "/echo") {
        response resp = text(echo);
        resp.headers.emplace_back("X-Auth", req.authorization);
        r.send(std::move(resp));
      } else if (req.path == "/async") {
        done.add(std::move(r), text(echo));
      } else if (req.path == "/throw") {
        throw std::runtime_error("handler failed");
      } else if (req.path == "/big") {
        r.send(text(pattern(std::stoul(req.query))));
      } else if (req.path == "/len") {
        r.send(text(std::to_string(req.body.size()) + " " +
                    std::to_string(req.body == pattern(req.body.size()))));
      } else if (req.path == "/hold") {
        held.add(std::move(r));
      } else if (req.path != "/drop") {
        r.send(text("unknown"));
      }
    });
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    if (s) srv = std::move(*s);
  }
  int port() const { return srv->port(); }
  std::vector<int> rejected_statuses() {
    std::lock_guard lock(rejected_mu);
    return rejected;
  }
};

inline std::string get(std::string_view path, std::string_view extra = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
}

inline std::string post(std::string_view path, std::string_view body) {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         std::string(body);
}

}  // namespace simdup::detail::http::http_test
