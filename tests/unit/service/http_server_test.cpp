// The epoll HTTP server on real loopback sockets: keep-alive, pipelining, replies completed
// from other threads, dropped replies, 100-continue, the server's own error answers, many
// concurrent clients, stop() with a pending reply, timeouts and the connection limit.
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

namespace simdup::detail::http {
namespace {

using namespace std::chrono_literals;

struct http_answer {
  int status = 0;
  std::string head;  ///< status line and headers, lower-cased
  std::string body;
  bool has(std::string_view header_line) const {
    return head.find(std::string(header_line) + "\r\n") != std::string::npos;
  }
};

constexpr int kReadGuardSeconds = 30;

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
bool eventually(Pred done) {
  const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(kReadGuardSeconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > guard) return false;
    std::this_thread::sleep_for(5ms);  // a poll interval, not a wait for something to happen
  }
  return true;
}

response text(std::string body) {
  response r;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

/// n bytes of a repeating pattern, to check large bodies arrive intact.
std::string pattern(std::size_t n) {
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

std::string get(std::string_view path, std::string_view extra = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
}

std::string post(std::string_view path, std::string_view body) {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         std::string(body);
}

TEST(HttpServer, KeepAliveServesManyRequestsOnOneConnection) {
  fixture f;
  client c(f.port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 200; ++i) {
    c.send(i % 2 == 0 ? post("/echo?i=" + std::to_string(i), "body" + std::to_string(i))
                      : get("/echo", "Authorization: Bearer t0k\r\n"));
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << i;
    EXPECT_EQ(a->status, 200);
    EXPECT_TRUE(a->has("content-type: text/plain"));
    EXPECT_FALSE(a->has("connection: close"));
    if (i % 2 == 0) {
      EXPECT_EQ(a->body, "POST /echo?i=" + std::to_string(i) + " body" + std::to_string(i));
    } else {
      EXPECT_EQ(a->body, "GET /echo? ");
      EXPECT_TRUE(a->has("x-auth: bearer t0k"));
    }
  }
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  fixture f;
  client c(f.port());
  std::string burst;
  for (int i = 0; i < 30; ++i) {
    burst += post(i % 3 == 0 ? "/async" : "/echo", std::to_string(i));
  }
  c.send(burst);
  for (int i = 0; i < 30; ++i) {
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << i;
    EXPECT_EQ(a->body,
              std::string("POST ") + (i % 3 == 0 ? "/async" : "/echo") + "? " + std::to_string(i));
  }
}

TEST(HttpServer, ReplySentLaterFromAnotherThread) {
  fixture f;
  client c(f.port());
  c.send(post("/hold", "x"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // Held by the test, the reply is sent from another thread after the handler returned.
  std::thread later([r = std::move(r)]() mutable {
    r.send(text("late"));
    r.send(text("ignored"));  // a second send does nothing
  });
  later.join();
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "late");
  // The connection goes on.
  c.send(get("/echo"));
  ASSERT_TRUE(c.read().has_value());
}

TEST(HttpServer, DroppedReplyOrThrowingHandlerAnswers500) {
  fixture f;
  client c(f.port());
  for (const char* path : {"/drop", "/throw"}) {
    c.send(get(path));
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << path;
    EXPECT_EQ(a->status, 500);
    EXPECT_TRUE(a->has("content-type: application/json"));
    EXPECT_NE(a->body.find(R"("code":"internal")"), std::string::npos) << a->body;
  }
  c.send(get("/echo"));
  ASSERT_TRUE(c.read().has_value());
  // A held reply dropped on another thread answers 500 too.
  c.send(get("/hold"));
  std::thread([r = f.held.take()] {}).join();
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 500);
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{500, 500, 500}));
}

TEST(HttpServer, ExpectContinueGetsAnInterimAnswer) {
  fixture f;
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  const auto interim = c.read();
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  c.send("data");
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "POST /echo? data");
}

TEST(HttpServer, OversizeBodyIs413JsonAndCloses) {
  server_options o;
  o.max_body_bytes = 1000;
  fixture f(o);
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 413);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(a->has("content-type: application/json"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"too_large","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{413}));
}

TEST(HttpServer, BadRequestIs400JsonAndCloses) {
  fixture f;
  client c(f.port());
  c.send(get("/echo") + "NONSENSE\r\n\r\n" + get("/echo"));
  const auto ok = c.read();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"bad_request","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{400}));
}

TEST(HttpServer, ChunkedHeadAndHttp10) {
  fixture f;
  client c(f.port());
  c.send(
      "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "POST /echo? abcde");
  // HEAD: the headers of the answer, no body.
  c.send("HEAD /echo HTTP/1.1\r\n\r\n" + get("/echo"));
  a = c.read(true);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("content-length: 12"));
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "GET /echo? ");
  // HTTP/1.0 keep-alive is confirmed; plain HTTP/1.0 closes.
  client c10(f.port());
  c10.send("GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  a = c10.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("connection: keep-alive"));
  c10.send("GET /echo HTTP/1.0\r\n\r\n");
  a = c10.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c10.closed_by_server());
}

TEST(HttpServer, LargeBodiesBothWays) {
  fixture f;
  client c(f.port());
  const std::string up = pattern(3u << 20);
  c.send(post("/len", up));  // arrives in many reads; parsed once complete
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, std::to_string(up.size()) + " 1");
  // An answer larger than the socket buffers is written in parts as the client reads (a small
  // receive buffer makes sure the server meets a full socket).
  client small(f.port(), 65536);
  small.send(get("/big?5000000") + get("/echo"));
  a = small.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body.size(), 5000000u);
  EXPECT_TRUE(a->body == pattern(5000000));
  a = small.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "GET /echo? ");
}

TEST(HttpServer, StuckWriteTimesOut) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  client c(f.port(), 4096);
  c.send(get("/big?33554432"));
  // Never read: the server gives up on the write once it made no progress for 1 s and closes
  // the connection; only then does the client read what the kernel still holds. (The first
  // bytes of the answer show the connection was accepted: before, no connection is open either.)
  ASSERT_TRUE(eventually([&] { return c.has_data(); }));
  ASSERT_TRUE(eventually([&] { return f.srv->open_connections() == 0; }));
  std::size_t received = 0;
  while (auto n = c.drain()) received += n;
  EXPECT_GT(received, 0u);
  EXPECT_LT(received, 33554432u);
}

TEST(HttpServer, ManyConcurrentClients) {
  server_options o;
  o.threads = 2;
  fixture f(o);
  constexpr int clients = 32;
  constexpr int requests = 200;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      client c(f.port());
      for (int i = 0; i < requests; ++i) {
        const std::string body = std::to_string(t) + "-" + std::to_string(i);
        const char* path = (i + t) % 4 == 0 ? "/async" : "/echo";
        c.send(post(path, body));
        const auto a = c.read();
        if (!a || a->status != 200 || a->body != std::string("POST ") + path + "? " + body) return;
        good.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), clients * requests);
}

TEST(HttpServer, StopDeliversPendingRepliesFirst) {
  server_options o;
  o.threads = 1;  // both connections on one loop: when `idle` closes, that loop is stopping
  fixture f(o);
  client c(f.port());
  client idle(f.port());
  c.send(post("/hold", "x"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // stop() must wait for the reply: the reply is sent only once stop() is under way (it closes
  // the idle connection first), so an early return shows as `sending` still false.
  std::atomic<bool> sending{false};
  std::atomic<bool> idle_closed{false};
  std::thread later([r = std::move(r), &sending, &idle, &idle_closed]() mutable {
    idle_closed = idle.closed_by_server();
    sending = true;
    r.send(text("done"));
  });
  f.srv->stop();
  EXPECT_TRUE(sending.load());
  later.join();
  EXPECT_TRUE(idle_closed.load());
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "done");
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c.closed_by_server());
  f.srv->stop();  // idempotent
}

TEST(HttpServer, RepliesOutlivingConnectionAndServerAreDropped) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  {
    client c(f.port());
    c.send(get("/hold"));
    reply gone = f.held.take();
    ASSERT_TRUE(gone.pending());
  }  // the client closes while its reply is pending; the server notices
  ASSERT_TRUE(eventually([&] { return f.srv->open_connections() == 0; }));
  client c(f.port());
  c.send(get("/hold"));
  reply kept = f.held.take();
  ASSERT_TRUE(kept.pending());
  f.srv->stop();  // gives up on the pending reply after timeout_s
  f.srv.reset();
  kept.send(text("too late"));  // the mailbox is closed: dropped, no crash
  EXPECT_FALSE(kept.pending());
}

TEST(HttpServer, IdleAndSlowConnectionsTimeOut) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  client idle(f.port());
  client slow(f.port());
  slow.send("GET /echo HTTP/1.1\r\nHost");
  client used(f.port());
  used.send(get("/echo"));
  ASSERT_TRUE(used.read().has_value());
  // The server's 1 s timeout closes them: closed_by_server() sees EOF (the client never gives
  // up on its own before the read guard).
  EXPECT_TRUE(idle.closed_by_server());
  // A request cut off half-way is told why; idle keep-alive connections just close.
  const auto a = slow.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 408);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"timeout","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(slow.closed_by_server());
  EXPECT_TRUE(used.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{408}));
}

TEST(HttpServer, SlowBodyIsServedWhileItKeepsComing) {
  manual_clock clock;
  server_options o;
  o.timeout_s = 1;
  o.threads = 1;
  o.clock = clock.fn();
  fixture f(o);
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nContent-Length: 6\r\n\r\n");
  // 6 bytes over 2.4 s of the server's clock: longer than timeout_s in all, but each arrives
  // within it. After each byte the clock moves on 400 ms and the test waits for a whole round
  // of the loop (three clock reads: the sweep of the second round judges by the new time), so
  // a server that did not restart the deadline on each read would answer 408 by the third.
  for (const char ch : std::string("abcdef")) {
    c.send(std::string(1, ch));
    clock.advance(400ms);
    const long seen = clock.reads;
    ASSERT_TRUE(eventually([&] { return clock.reads >= seen + 3; }));
  }
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "POST /echo? abcdef");
}

TEST(HttpServer, LostReplyIsAnswered500AfterReplyTimeout) {
  server_options o;
  o.reply_timeout_s = 1;
  fixture f(o);
  client c(f.port());
  c.send(get("/hold"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  const auto a = c.read();  // the reply is never sent in time
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 500);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_NE(a->body.find(R"("code":"internal")"), std::string::npos) << a->body;
  EXPECT_NE(a->body.find("in time"), std::string::npos) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  r.send(text("too late"));  // dropped
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{500}));
  client next(f.port());
  next.send(get("/echo"));
  ASSERT_TRUE(next.read().has_value());
}

TEST(HttpServer, Http10WithTransferEncodingIs400) {
  fixture f;
  client c(f.port());
  c.send(
      "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n" +
      get("/echo"));
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, PipelinedBytesWaitInTheSocketWhileAReplyIsPending) {
  server_options o;
  o.max_body_bytes = 64u << 20;
  fixture f(o);
  client c(f.port());
  c.send(get("/hold"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // Offer 64 MiB of a pipelined request without blocking: only the kernel's socket buffers
  // (a few MiB) and a little of the server's take it while the reply is pending.
  const std::string big = post("/len", pattern(64u << 20));
  std::size_t taken = 0;
  for (int idle_rounds = 0; idle_rounds < 5 && taken < big.size();) {
    const ssize_t n = c.send_some(std::string_view(big).substr(taken));
    if (n > 0) {
      taken += static_cast<std::size_t>(n);
      idle_rounds = 0;
    } else {
      ++idle_rounds;
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_LT(taken, 24u << 20);
  // Once answered, the rest flows and the pipelined request is served.
  r.send(text("held"));
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "held");
  c.send(std::string_view(big).substr(taken));
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, std::to_string(64u << 20) + " 1");
}

TEST(HttpServer, ThrowingRejectionCallbackDoesNotStopTheServer) {
  server_options o;
  o.on_rejected = [](int) { throw std::runtime_error("metrics failed"); };
  auto s = server::start(o, [](request&& req, reply r) { r.send(text(req.path)); });
  ASSERT_TRUE(s.has_value());
  client c((*s)->port());
  // The 400 is found after the first answer, outside any read event.
  c.send(get("/a") + "NONSENSE\r\n\r\n");
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "/a");
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  client next((*s)->port());
  next.send(get("/b"));
  a = next.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "/b");
}

TEST(HttpServer, ConnectionLimitAnswers503) {
  server_options o;
  o.max_connections = 2;
  fixture f(o);
  client a(f.port());
  client b(f.port());
  for (client* c : {&a, &b}) {
    c->send(get("/echo"));
    ASSERT_TRUE(c->read().has_value());
  }
  client extra(f.port());
  const auto r = extra.read();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find(R"("code":"unavailable")"), std::string::npos);
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{503}));
}

TEST(HttpServer, RejectsBadOptions) {
  server_options o;
  o.threads = 0;
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.threads = 257;  // service.cpp clamps; the server rejects
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.threads = 1;
  o.reply_timeout_s = -1;
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.reply_timeout_s = 0;
  o.host = "256.1.1.1";
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
}

}  // namespace
}  // namespace simdup::detail::http
