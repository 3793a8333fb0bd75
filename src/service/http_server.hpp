// A small HTTP/1.1 server for `simdup serve`: a few epoll event loops, each serving many
// keep-alive connections, with answers that may be completed later from any thread (the store
// acknowledges a write only after its sync thread's group fsync).
//
// - Each loop has its own epoll; they share one non-blocking listening socket (EPOLLEXCLUSIVE).
//   The loop that accepts a connection hands it to the loop serving the fewest connections, so
//   a burst of connects does not pile onto one loop.
// - The handler runs on the loop thread. A connection has at most one request in progress:
//   while its reply is pending, further pipelined bytes stay buffered, so answers stay in order.
// - reply::send on the loop thread writes at once; from another thread it queues the answer and
//   wakes the loop through an eventfd (written only when the queue was empty).
// - Each answer is written with one sendmsg (head and body together) when the socket takes it.
// - Answers the server makes itself (400, 408, 413, 431, 500, 501, 505, 503) are JSON errors
//   `{"error":{"code":...,"message":...}}` (error_body) and close the connection.
// - Timeouts (timeout_s): a connection must send a request head within timeout_s of connecting
//   or of its previous answer, and then keep the body coming (each read restarts the clock); a
//   stuck write makes no progress for timeout_s. An idle keep-alive connection just closes; one
//   cut off in the middle of a request gets a 408 first. A request whose reply does not come
//   within reply_timeout_s gets a 500 and its connection closes.
// - While a request waits for its reply, at most max_header_bytes of pipelined bytes beyond it
//   are read (the socket buffers hold the rest); buffers emptied give large memory back.
// - After an answer with `Connection: close` the server shuts down its sending side and reads
//   and discards what the client still sends (at most 2 s) before closing, so the client reads
//   the answer instead of a connection reset.
#pragma once

#include <simdup/error.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "service/http_parser.hpp"

namespace simdup::detail::http {

/// One answer.
struct response {
  int status = 200;                               ///< HTTP status code (200..599)
  std::string content_type = "application/json";  ///< Content-Type; omitted when empty
  std::string body;
  /// Extra header lines (name, value), e.g. {"WWW-Authenticate", "Bearer"}. Trusted: no CR or LF.
  std::vector<std::pair<std::string, std::string>> headers;
};

class event_loop;
struct mailbox;

/// The JSON body of every error answer: `{"error":{"code":<code>,"message":<message>}}`, both
/// strings JSON-escaped.
std::string error_body(std::string_view code, std::string_view message);

/// Move-only handle to one request's answer. send() once, from any thread, during or after the
/// handler. Destroyed without send(): the client gets a 500 JSON error, never silence. Safe to
/// use after the connection closed or the server stopped (the answer is then dropped).
class reply {
 public:
  reply() = default;
  reply(reply&& other) noexcept;
  reply& operator=(reply&& other) noexcept;
  reply(const reply&) = delete;
  reply& operator=(const reply&) = delete;
  ~reply();

  /// Sends the answer; later calls (and calls on a moved-from reply) do nothing. If queuing it
  /// runs out of memory, throws std::bad_alloc and the reply stays pending.
  void send(response r);
  /// True until send() was called (or the reply was moved from).
  bool pending() const noexcept { return box_ != nullptr; }

 private:
  friend class event_loop;
  reply(std::shared_ptr<mailbox> box, int fd, std::uint64_t serial)
      : box_(std::move(box)), fd_(fd), serial_(serial) {}
  void deliver(response r, bool dropped);
  /// Answers 500 if send() was never called.
  void abandon() noexcept;

  std::shared_ptr<mailbox> box_;
  int fd_ = -1;
  std::uint64_t serial_ = 0;
};

/// Called on a loop thread for each complete request; must be thread-safe (loops run it
/// concurrently) and should not block long (it holds up the loop's other connections).
/// Exceptions are caught: the client gets a 500 if the reply was not sent.
using handler = std::function<void(request&&, reply)>;

struct server_options {
  /// Address to bind (numeric IPv4 or IPv6, or a host name); loopback by default.
  std::string host = "127.0.0.1";
  /// TCP port; 0 picks a free one (see server::port()).
  int port = 0;
  /// Event loop threads, 1..256.
  int threads = 2;
  /// Largest request body in bytes (after chunked decoding), inclusive; more is 413.
  std::size_t max_body_bytes = 8u << 20;
  /// Largest request head (request line and headers) in bytes, inclusive; more is 431.
  std::size_t max_header_bytes = 16384;
  /// Seconds (>= 1) a connection may stay idle or take to send a request, a write may stay
  /// stuck, and stop() waits for pending replies.
  int timeout_s = 10;
  /// Seconds a request may wait for its reply before the server answers 500 ("internal") and
  /// closes the connection, so a lost reply cannot hold a connection forever; 0: the larger of
  /// 6 x timeout_s and 60.
  int reply_timeout_s = 0;
  /// Open connections at most, inclusive; a connection beyond gets a 503 and is closed.
  std::size_t max_connections = 10000;
  /// Called (from loop threads, concurrently) with the status of every answer the server makes
  /// itself: 400, 408, 413, 431, 501, 505, 503, and 500 for a reply dropped without send() or
  /// not sent within reply_timeout_s. For metrics; may be empty.
  std::function<void(int status)> on_rejected;
  /// The time the timeouts (and stop()'s wait) are measured on; empty: steady_clock::now. Tests
  /// set a clock they advance by hand, so a timeout follows their steps, not the machine's load.
  /// The loops read it twice a round, a round at least every timeout_s / 4 (at most 1 s).
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class server {
 public:
  /// Binds, listens and starts the event loop threads.
  static result<std::unique_ptr<server>> start(server_options options, handler h);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// The bound TCP port.
  int port() const noexcept { return port_; }

  /// Connections open now (accepted and not yet closed by the server).
  std::size_t open_connections() const noexcept {
    return open_connections_.load(std::memory_order_relaxed);
  }

  /// Stops accepting, waits (at most timeout_s) until every request already handed to the
  /// handler has its reply sent and written, closes every connection and joins the threads.
  /// Idempotent; not to be called from a handler.
  void stop();

 private:
  friend class event_loop;
  server() = default;

  server_options opt_;
  handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> open_connections_{0};
  std::vector<std::unique_ptr<event_loop>> loops_;
  std::vector<std::thread> threads_;
  std::mutex stop_mu_;
  bool stopped_ = false;
};

}  // namespace simdup::detail::http
