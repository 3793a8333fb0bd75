// Internal to the HTTP server (http_server.cpp, http_event_loop.cpp): one event loop with its
// connections, and the mailbox it shares with the replies it gave out.
//
// Ownership: the server owns its event loops; each loop owns its connections (indexed by fd)
// and shares a mailbox (completion queue, handed-over fds, eventfd) with the replies it gave
// out, so a reply outliving its connection, loop or server only finds the mailbox closed.
// A reply names its connection by fd and a process-wide serial, so a reused fd never receives
// another connection's answer.
//
// A connection is never destroyed while its handler runs: answers written from inside a handler
// only mark the connection (closing, or ready to parse its next request), and the loop acts on
// the marks once the handler has returned.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http_parser.hpp"
#include "service/http_server.hpp"

namespace simdup::detail::http {

/// One answer completed on another thread, waiting for its loop.
struct completion {
  int fd;
  std::uint64_t serial;
  response r;
  bool dropped;  ///< the reply was destroyed without send(): a 500 made by the server
};

/// What a loop shares with the replies it gave out and with the other loops.
struct mailbox {
  std::mutex mu;
  std::vector<completion> done;  ///< guarded by mu
  std::vector<int> new_fds;      ///< accepted by another loop, guarded by mu
  bool open = true;              ///< guarded by mu; false once the loop has exited
  int event_fd = -1;             ///< wakes the loop; closed with the last reference
  event_loop* owner = nullptr;   ///< only dereferenced on the owner's thread

  mailbox() = default;
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;
  ~mailbox() {
    if (event_fd >= 0) ::close(event_fd);
  }

  /// Runs `add` (which appends to `done` or `new_fds`) with mu held and wakes the loop if both
  /// queues were empty (otherwise a wake-up is already on its way). False, without running
  /// `add`, once the loop has exited. If `add` throws, nothing was queued and it propagates.
  template <class Fn>
  bool post(Fn&& add) {
    bool needs_wake;
    {
      std::lock_guard lock(mu);
      if (!open) return false;
      needs_wake = done.empty() && new_fds.empty();
      add();
    }
    if (needs_wake) wake();
    return true;
  }

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(event_fd, &one, sizeof one);
  }
};

/// The mailbox of the loop running on this thread, if any (replies sent from their own loop's
/// thread are written at once).
extern thread_local mailbox* current_box;

/// A JSON error answer `{"error":{"code":...,"message":...}}` (code from error_code_for).
response error_response(int status, std::string_view message);

/// Appends the status line and headers of `r` (Content-Type and Content-Length unless the
/// status has no body, `Connection: close` or, for HTTP/1.0, `Connection: keep-alive`, the
/// extra headers) and the blank line.
void append_head(std::string& out, const response& r, bool close_after, bool http10);

/// Whether answers with this status carry a body (not 1xx, 204, 304).
inline bool has_body(int status) {
  return status >= 200 && status != 204 && status != 304;
}

using loop_clock = std::chrono::steady_clock;

enum class conn_state {
  reading,    ///< parsing the next request
  awaiting,   ///< the handler has the request; its reply has not come yet
  writing,    ///< the answer is partly written
  lingering,  ///< answered with Connection: close; discarding input until EOF
  closing,    ///< to be closed once no handler runs for it
};

struct connection {
  int fd = -1;
  std::uint64_t serial = 0;
  conn_state state = conn_state::reading;
  std::string in;  ///< received bytes; the unparsed ones start at in_off
  std::size_t in_off = 0;
  /// Parsing again cannot change the answer while fewer than `want` bytes are unparsed and no
  /// LF arrived at or after unparsed index `lf_from` (see parse_result).
  std::size_t want = 0;
  std::size_t lf_from = std::string_view::npos;
  parse_resume resume;     ///< where the next parse of a chunked body resumes
  bool head_done = false;  ///< the request being received has a complete head
  std::string out;         ///< bytes the socket did not take yet, from out_off
  std::size_t out_off = 0;
  loop_clock::time_point deadline;  ///< see the timeouts in http_server.hpp
  std::uint32_t events = 0;         ///< registered epoll interest
  bool keep_alive = false;          ///< of the request in progress
  bool http10 = false;
  bool head_method = false;
  bool close_after = false;  ///< of the answer being written
  bool continue_sent = false;
  bool peer_eof = false;
  bool in_dispatch = false;
};

class event_loop {
 public:
  explicit event_loop(server& s);
  ~event_loop() {
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  /// Creates the epoll set and the eventfd and watches the listening socket.
  status init();

  /// Connections this loop serves or was handed (read by other loops to balance).
  std::size_t load() const { return load_.load(std::memory_order_relaxed); }

  /// Gives an accepted connection to this loop; false if it has exited (or out of memory).
  bool hand_over(int fd) noexcept {
    try {
      return box_->post([&] { box_->new_fds.push_back(fd); });
    } catch (...) {
      return false;
    }
  }

  void wake() { box_->wake(); }

  void run();

  /// An answer for connection (fd, serial), on this loop's thread.
  void complete(int fd, std::uint64_t serial, response&& r, bool dropped) noexcept;

 private:
  /// Adds the listening socket to this loop's epoll set.
  bool watch_listener();

  connection* find(int fd, std::uint64_t serial) {
    if (fd < 0 || static_cast<std::size_t>(fd) >= conns_.size()) return nullptr;
    connection* c = conns_[static_cast<std::size_t>(fd)].get();
    return c != nullptr && c->serial == serial ? c : nullptr;
  }

  void rejected(int status) noexcept {
    try {
      if (server_.opt_.on_rejected) server_.opt_.on_rejected(status);
    } catch (...) {  // a metrics callback must not take the loop down
    }
  }

  void accept_all();
  void add_conn(int fd) noexcept;
  /// Closes an accepted fd that never became a connection.
  void discard_fd(int fd) noexcept;
  /// Closes `c` now, or once its handler returns. Never throws (unlike fail(), which queues an
  /// answer), so it also serves after an exception (out of memory) while serving `c`.
  void close_conn(connection& c) noexcept;
  /// The server's own error answer (400, 408, 413, 500, ...) on a connection, counted through
  /// on_rejected, then close.
  void answer_and_close(connection& c, int status, std::string_view message);
  void drain_mailbox();
  void on_event(connection& c, std::uint32_t events);
  void on_readable(connection& c);
  void advance(connection& c);
  void dispatch(connection& c, request&& req);
  void queue_response(connection& c, const response& r, bool close_after);
  void send_bytes(connection& c, std::string_view a, std::string_view b);
  void flush(connection& c);
  void after_write(connection& c, bool progressed);
  void update_interest(connection& c);
  void mark(connection& c) {
    if (!c.in_dispatch) ready_.emplace_back(c.fd, c.serial);
  }
  void fail(connection& c) {
    c.state = conn_state::closing;
    mark(c);
  }
  /// Closes (or answers) connections whose deadline passed by `polled`.
  void sweep(loop_clock::time_point polled);
  void begin_stop();
  /// While stopping: every answer is written (lingering connections are not waited for).
  bool drained() const {
    return std::all_of(conns_.begin(), conns_.end(),
                       [](const auto& p) { return !p || p->state == conn_state::lingering; });
  }
  void shut_down();

  server& server_;
  std::shared_ptr<mailbox> box_;
  parser_limits limits_;
  std::size_t in_cap_ = 0;
  loop_clock::duration timeout_{};
  loop_clock::duration reply_timeout_{};  ///< see server_options::reply_timeout_s
  loop_clock::duration sweep_every_{};
  std::function<loop_clock::time_point()> clock_;  ///< server_options::clock
  int epoll_fd_ = -1;
  std::vector<std::unique_ptr<connection>> conns_;  ///< by fd
  std::atomic<std::size_t> load_{0};
  std::vector<std::pair<int, std::uint64_t>> ready_;  ///< connections to advance or close
  std::vector<completion> done_;                      ///< swapped with the mailbox's
  std::vector<int> new_fds_;
  loop_clock::time_point now_{};
  bool stopping_ = false;
  loop_clock::time_point stop_deadline_{};
  bool listener_paused_ = false;
  loop_clock::time_point listener_resume_{};
  /// Bytes read from a socket per recv.
  static constexpr std::size_t read_chunk = 64u << 10;
  /// Connections accepted per wake-up at most: the listener is level-triggered, so the rest
  /// wait for the next round and a connect flood cannot starve the open connections.
  static constexpr int max_accepts = 64;
  std::unique_ptr<char[]> scratch_ = std::make_unique<char[]>(read_chunk);
};

}  // namespace simdup::detail::http
