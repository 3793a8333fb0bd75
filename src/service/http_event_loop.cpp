// The event loop of the HTTP server; see http_server.hpp (behaviour) and http_event_loop.hpp
// (ownership).
#include "service/http_event_loop.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace simdup::detail::http {
namespace {

std::atomic<std::uint64_t> next_serial{1};

constexpr auto max_linger = std::chrono::seconds(2);
constexpr std::string_view continue_line = "HTTP/1.1 100 Continue\r\n\r\n";

/// Empties a buffer; one that grew large (a big request or answer) gives its memory back, so an
/// idle keep-alive connection does not keep megabytes.
void clear_buffer(std::string& s) noexcept {
  constexpr std::size_t keep_capacity = 64u << 10;
  if (s.capacity() > keep_capacity) {
    std::string().swap(s);
  } else {
    s.clear();
  }
}

/// Forgets the parse of the request that was being received.
void reset_parse(connection& c) noexcept {
  c.want = 0;
  c.lf_from = std::string_view::npos;
  c.resume = {};
  c.head_done = false;
}

/// Whether an LF arrived in the unparsed bytes at or after c.lf_from; remembers how far the
/// bytes were searched, so each byte is searched once.
bool lf_arrived(connection& c, std::size_t avail) {
  if (c.lf_from == std::string_view::npos || c.lf_from >= avail) return false;
  const char* from = c.in.data() + c.in_off + c.lf_from;
  if (std::memchr(from, '\n', avail - c.lf_from) != nullptr) return true;
  c.lf_from = avail;
  return false;
}

}  // namespace

thread_local mailbox* current_box = nullptr;

event_loop::event_loop(server& s) : server_(s), box_(std::make_shared<mailbox>()) {
  limits_.max_header_bytes = s.opt_.max_header_bytes;
  limits_.max_body_bytes = s.opt_.max_body_bytes;
  in_cap_ = limits_.max_header_bytes + limits_.max_body_bytes + limits_.max_chunk_framing_bytes +
            read_chunk;
  timeout_ = std::chrono::seconds(s.opt_.timeout_s);
  reply_timeout_ = s.opt_.reply_timeout_s > 0
                       ? std::chrono::seconds(s.opt_.reply_timeout_s)
                       : std::chrono::seconds(std::max(6 * s.opt_.timeout_s, 60));
  sweep_every_ = std::min<loop_clock::duration>(std::chrono::seconds(1), timeout_ / 4);
  clock_ = s.opt_.clock ? s.opt_.clock : [] { return loop_clock::now(); };
  box_->owner = this;
}

status event_loop::init() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  box_->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || box_->event_fd < 0) {
    return make_error(errc::io_error,
                      std::string("cannot create epoll/eventfd: ") + std::strerror(errno));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = box_->event_fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, box_->event_fd, &ev) != 0 || !watch_listener()) {
    return make_error(errc::io_error,
                      std::string("cannot register with epoll: ") + std::strerror(errno));
  }
  return {};
}

bool event_loop::watch_listener() {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = server_.listen_fd_;
  return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, server_.listen_fd_, &ev) == 0;
}

void event_loop::run() {
  current_box = box_.get();
  std::vector<epoll_event> events(256);
  now_ = clock_();
  loop_clock::time_point next_sweep = now_ + sweep_every_;
  for (;;) {
    if (!stopping_ && server_.stopping_.load(std::memory_order_acquire)) begin_stop();
    if (stopping_ && (drained() || now_ >= stop_deadline_)) break;
    if (listener_paused_ && !stopping_ && now_ >= listener_resume_) {
      listener_paused_ = !watch_listener();
      listener_resume_ = now_ + std::chrono::milliseconds(100);
    }
    // Bytes that came before `polled` are among this round's events, so the sweep below judges
    // a deadline by it: a connection is only late if nothing of it had come by then.
    const loop_clock::time_point polled = clock_();
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_sweep - polled);
    const int n =
        ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                     static_cast<int>(std::clamp<std::int64_t>(wait.count() + 1, 1, 1000)));
    now_ = clock_();
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == server_.listen_fd_) {
        if (!stopping_) accept_all();
      } else if (fd == box_->event_fd) {
        drain_mailbox();
      } else if (static_cast<std::size_t>(fd) < conns_.size() &&
                 conns_[static_cast<std::size_t>(fd)]) {
        on_event(*conns_[static_cast<std::size_t>(fd)], events[static_cast<std::size_t>(i)].events);
      }
    }
    // Connections whose answer was written (or that failed) meanwhile; advancing one may run a
    // handler that marks others, so drain until none is left.
    while (!ready_.empty()) {
      const auto [fd, serial] = ready_.back();
      ready_.pop_back();
      if (connection* c = find(fd, serial)) {
        try {
          advance(*c);
        } catch (...) {
          close_conn(*c);  // out of memory: drop this connection, keep serving the others
        }
      }
    }
    if (now_ >= next_sweep) {
      sweep(polled);
      next_sweep = now_ + sweep_every_;
    }
  }
  shut_down();
}

void event_loop::begin_stop() {
  stopping_ = true;
  stop_deadline_ = now_ + timeout_;
  if (!listener_paused_) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, server_.listen_fd_, nullptr);
  // Connections between requests (or in the middle of receiving one) close now; those whose
  // request the handler has get their answer first.
  for (auto& p : conns_) {
    if (p && p->state == conn_state::reading) close_conn(*p);
  }
}

void event_loop::shut_down() {
  for (auto& p : conns_) {
    if (p) close_conn(*p);
  }
  current_box = nullptr;
  std::vector<completion> dropped;
  {
    std::lock_guard lock(box_->mu);
    box_->open = false;
    for (const int fd : box_->new_fds) discard_fd(fd);
    box_->new_fds.clear();
    dropped.swap(box_->done);
  }
}

void event_loop::accept_all() {
  for (int accepted = 0; accepted < max_accepts; ++accepted) {
    const int fd = ::accept4(server_.listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the listener stays readable, so stop watching it for a moment
        // instead of spinning.
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, server_.listen_fd_, nullptr);
        listener_paused_ = true;
        listener_resume_ = now_ + std::chrono::milliseconds(100);
      }
      return;  // EAGAIN, or an error the next readiness retries
    }
    if (server_.open_connections_.fetch_add(1, std::memory_order_relaxed) >=
        server_.opt_.max_connections) {
      server_.open_connections_.fetch_sub(1, std::memory_order_relaxed);
      rejected(503);
      try {
        // The same bytes for every refused connection, built once.
        static const std::string busy = [] {
          const response r = error_response(503, "too many open connections");
          std::string msg;
          append_head(msg, r, true, false);
          return msg + r.body;
        }();
        [[maybe_unused]] const ssize_t n = ::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
      } catch (...) {  // out of memory: close without the answer
      }
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // The least loaded loop takes it; load counts connections handed over but not yet
    // registered, so a burst of connects spreads over the loops.
    event_loop* target = this;
    for (const auto& l : server_.loops_) {
      if (l->load() < target->load()) target = l.get();
    }
    target->load_.fetch_add(1, std::memory_order_relaxed);
    if (target != this && !target->hand_over(fd)) {
      target->load_.fetch_sub(1, std::memory_order_relaxed);
      load_.fetch_add(1, std::memory_order_relaxed);
      target = this;
    }
    if (target == this) add_conn(fd);
  }
}

void event_loop::add_conn(int fd) noexcept {
  if (stopping_) {
    discard_fd(fd);
    return;
  }
  try {
    // Everything that can throw comes before the fd joins the epoll set.
    if (static_cast<std::size_t>(fd) >= conns_.size()) {
      conns_.resize(std::max<std::size_t>(static_cast<std::size_t>(fd) + 1, conns_.size() * 2));
    }
    auto c = std::make_unique<connection>();
    c->fd = fd;
    c->serial = next_serial.fetch_add(1, std::memory_order_relaxed);
    c->deadline = now_ + timeout_;
    c->events = EPOLLIN;
    epoll_event ev{};
    ev.events = c->events;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      discard_fd(fd);
      return;
    }
    conns_[static_cast<std::size_t>(fd)] = std::move(c);
  } catch (...) {
    discard_fd(fd);  // out of memory
  }
}

void event_loop::discard_fd(int fd) noexcept {
  ::close(fd);
  load_.fetch_sub(1, std::memory_order_relaxed);
  server_.open_connections_.fetch_sub(1, std::memory_order_relaxed);
}

void event_loop::close_conn(connection& c) noexcept {
  if (c.in_dispatch) {
    c.state = conn_state::closing;
    return;
  }
  const int fd = c.fd;
  ::close(fd);
  conns_[static_cast<std::size_t>(fd)].reset();  // destroys c
  load_.fetch_sub(1, std::memory_order_relaxed);
  server_.open_connections_.fetch_sub(1, std::memory_order_relaxed);
}

void event_loop::drain_mailbox() {
  std::uint64_t count;
  [[maybe_unused]] const ssize_t n = ::read(box_->event_fd, &count, sizeof count);
  {
    std::lock_guard lock(box_->mu);
    done_.swap(box_->done);
    new_fds_.swap(box_->new_fds);
  }
  for (const int fd : new_fds_) add_conn(fd);
  new_fds_.clear();
  for (auto& d : done_) complete(d.fd, d.serial, std::move(d.r), d.dropped);
  done_.clear();
}

void event_loop::complete(int fd, std::uint64_t serial, response&& r, bool dropped) noexcept {
  connection* c = find(fd, serial);
  if (c == nullptr || c->state != conn_state::awaiting) return;
  if (dropped) rejected(500);
  try {
    queue_response(*c, r, !c->keep_alive || stopping_);
  } catch (...) {
    close_conn(*c);  // out of memory
  }
}

void event_loop::on_event(connection& c, std::uint32_t events) {
  try {
    if ((events & EPOLLOUT) != 0 && c.out_off < c.out.size()) flush(c);
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && c.state != conn_state::closing) {
      on_readable(c);
    }
  } catch (...) {
    close_conn(c);  // out of memory: drop this connection, keep serving the others
  }
}

void event_loop::on_readable(connection& c) {
  if (c.state == conn_state::lingering) {
    for (int i = 0; i < 16; ++i) {  // bounded: a flooding client must not hold the loop
      const ssize_t n = ::recv(c.fd, scratch_.get(), read_chunk, 0);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      close_conn(c);  // EOF or error
      return;
    }
    return;
  }
  // While a request waits for its answer, only a little of what follows it is read; the socket
  // buffers hold the rest (see update_interest).
  const std::size_t cap = c.state == conn_state::reading ? in_cap_ : limits_.max_header_bytes;
  for (;;) {
    const ssize_t n = ::recv(c.fd, scratch_.get(), read_chunk, 0);
    if (n > 0) {
      c.in.append(scratch_.get(), static_cast<std::size_t>(n));
      // A slow body keeps its connection as long as it keeps coming.
      if (c.state == conn_state::reading && c.head_done) c.deadline = now_ + timeout_;
      // A short read drained the socket (level-triggered epoll reports any rest).
      if (static_cast<std::size_t>(n) == read_chunk && c.in.size() - c.in_off < cap) continue;
      break;
    }
    if (n == 0) {
      c.peer_eof = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    close_conn(c);
    return;
  }
  if (c.state == conn_state::reading) {
    advance(c);
  } else {
    update_interest(c);
  }
}

void event_loop::advance(connection& c) {
  for (;;) {
    if (c.state == conn_state::closing) {
      close_conn(c);
      return;
    }
    if (c.state != conn_state::reading) return;
    const std::size_t avail = c.in.size() - c.in_off;
    if (stopping_ && avail == 0) {
      close_conn(c);
      return;
    }
    if (avail < c.want && !lf_arrived(c, avail)) {
      if (c.peer_eof) close_conn(c);
      return;
    }
    parse_result r = parse_request(std::string_view(c.in).substr(c.in_off), limits_, c.resume);
    if (r.state == parse_status::need_more) {
      c.want = r.want;
      c.lf_from = r.lf_from;
      c.resume = r.resume;
      c.head_done = r.head_complete;
      if (c.peer_eof || stopping_) {
        close_conn(c);  // the request can never complete
        return;
      }
      if (c.in_off > 0) {
        c.in.erase(0, c.in_off);
        c.in_off = 0;
      }
      if (r.expect_continue && !c.continue_sent) {
        c.continue_sent = true;
        send_bytes(c, continue_line, {});
        continue;  // re-checks the state; the parse is skipped by `want`
      }
      return;
    }
    if (r.state == parse_status::error) {
      clear_buffer(c.in);
      c.in_off = 0;
      answer_and_close(c, r.status, r.message);
      continue;
    }
    c.in_off += r.consumed;
    if (c.in_off == c.in.size()) {
      clear_buffer(c.in);
      c.in_off = 0;
    }
    reset_parse(c);
    c.continue_sent = false;
    c.keep_alive = r.keep_alive;
    c.http10 = !r.http11;
    c.head_method = r.req.method == "HEAD";
    c.state = conn_state::awaiting;
    c.deadline = now_ + reply_timeout_;
    update_interest(c);
    dispatch(c, std::move(r.req));
  }
}

void event_loop::dispatch(connection& c, request&& req) {
  c.in_dispatch = true;
  try {
    server_.handler_(std::move(req), reply(box_, c.fd, c.serial));
  } catch (...) {
    // The reply, destroyed while unwinding, answered 500 unless the handler had sent it.
  }
  c.in_dispatch = false;
}

void event_loop::queue_response(connection& c, const response& r, bool close_after) {
  std::string head;
  head.reserve(128);
  append_head(head, r, close_after, c.http10);
  c.close_after = close_after;
  c.state = conn_state::writing;
  const bool body = has_body(r.status) && !c.head_method;
  send_bytes(c, head, body ? std::string_view(r.body) : std::string_view());
}

void event_loop::send_bytes(connection& c, std::string_view a, std::string_view b) {
  if (c.out_off < c.out.size()) {  // earlier bytes still queued: keep the order
    c.out.append(a);
    c.out.append(b);
    flush(c);
    return;
  }
  c.out.clear();
  c.out_off = 0;
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = b.empty() ? 1 : 2;
  ssize_t n;
  do {
    n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      fail(c);
      return;
    }
    n = 0;
  }
  const auto sent = static_cast<std::size_t>(n);
  if (sent < a.size()) {
    c.out.append(a.substr(sent));
    c.out.append(b);
  } else if (sent < a.size() + b.size()) {
    c.out.append(b.substr(sent - a.size()));
  }
  after_write(c, true);
}

void event_loop::flush(connection& c) {
  bool progressed = false;
  while (c.out_off < c.out.size()) {
    const ssize_t n =
        ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      fail(c);
      return;
    }
    c.out_off += static_cast<std::size_t>(n);
    progressed = true;
  }
  after_write(c, progressed);
}

void event_loop::after_write(connection& c, bool progressed) {
  if (c.out_off < c.out.size()) {
    if (progressed) c.deadline = now_ + timeout_;
    update_interest(c);
    return;
  }
  clear_buffer(c.out);
  c.out_off = 0;
  if (c.state == conn_state::writing) {
    if (c.close_after) {
      // Let the client read the answer: a close with unread input would reset the connection.
      ::shutdown(c.fd, SHUT_WR);
      c.state = conn_state::lingering;
      clear_buffer(c.in);
      c.in_off = 0;
      c.deadline = now_ + std::min<loop_clock::duration>(timeout_, max_linger);
      if (c.peer_eof) fail(c);
    } else {
      c.state = conn_state::reading;
      c.deadline = now_ + timeout_;
      mark(c);
    }
  }
  update_interest(c);
}

void event_loop::update_interest(connection& c) {
  if (c.state == conn_state::closing) return;
  std::uint32_t want = 0;
  // Pipelined bytes behind a request in progress: a little is read, the rest waits in the
  // socket (bounds the memory of a connection whose answer is slow).
  const bool room = c.state == conn_state::reading || c.state == conn_state::lingering ||
                    c.in.size() - c.in_off < limits_.max_header_bytes;
  if (!c.peer_eof && room) want |= EPOLLIN;
  if (c.out_off < c.out.size()) want |= EPOLLOUT;
  if (want == c.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.fd = c.fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) {
    fail(c);
    return;
  }
  c.events = want;
}

void event_loop::sweep(loop_clock::time_point polled) {
  for (auto& p : conns_) {
    if (!p || polled < p->deadline) continue;
    connection& c = *p;
    try {
      if (c.state == conn_state::awaiting) {
        // The reply was lost or the handler's backend is stuck: do not wait forever.
        answer_and_close(c, 500, "the answer to this request did not come in time");
      } else if (c.state == conn_state::reading && c.in.size() > c.in_off &&
                 c.out_off == c.out.size()) {
        // Part of a request came but not the rest; an idle connection just closes.
        answer_and_close(c, 408, "the request was not received in time");
      } else {
        close_conn(c);
      }
    } catch (...) {
      close_conn(c);  // out of memory
    }
  }
}

void event_loop::answer_and_close(connection& c, int status, std::string_view message) {
  rejected(status);
  if (c.state == conn_state::reading) {
    c.http10 = false;  // of the previous request
    c.head_method = false;
    reset_parse(c);
  }
  queue_response(c, error_response(status, message), true);
}

}  // namespace simdup::detail::http
