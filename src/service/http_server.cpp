// The HTTP server's replies, answer formatting and listening socket; the event loops are in
// http_event_loop.cpp. The design is described in http_server.hpp.
#include "service/http_server.hpp"

#include <simdup/json.hpp>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "service/http_event_loop.hpp"

namespace simdup::detail::http {
namespace {

const char* reason(int status) {
  static constexpr std::pair<int, const char*> reasons[] = {
      {100, "Continue"},
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {204, "No Content"},
      {304, "Not Modified"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {409, "Conflict"},
      {413, "Content Too Large"},
      {415, "Unsupported Media Type"},
      {422, "Unprocessable Content"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {503, "Service Unavailable"},
      {505, "HTTP Version Not Supported"},
      {507, "Insufficient Storage"}};
  for (const auto& [code, text] : reasons) {
    if (code == status) return text;
  }
  return status < 400 ? "OK" : "Error";
}

void append_number(std::string& out, std::size_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

}  // namespace

std::string error_body(std::string_view code, std::string_view message) {
  std::string body = "{\"error\":{\"code\":";
  json::append_string(body, code);
  body += ",\"message\":";
  json::append_string(body, message);
  body += "}}";
  return body;
}

response error_response(int status, std::string_view message) {
  response r;
  r.status = status;
  r.body = error_body(error_code_for(status), message);
  return r;
}

void append_head(std::string& out, const response& r, bool close_after, bool http10) {
  out += "HTTP/1.1 ";
  append_number(out, static_cast<std::size_t>(std::clamp(r.status, 100, 999)));
  out += ' ';
  out += reason(r.status);
  out += "\r\n";
  if (has_body(r.status)) {
    if (!r.content_type.empty()) {
      out += "Content-Type: ";
      out += r.content_type;
      out += "\r\n";
    }
    out += "Content-Length: ";
    append_number(out, r.body.size());
    out += "\r\n";
  }
  if (close_after) {
    out += "Connection: close\r\n";
  } else if (http10) {
    out += "Connection: keep-alive\r\n";
  }
  for (const auto& [name, value] : r.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "\r\n";
}

// ---- reply ----

reply::reply(reply&& other) noexcept
    : box_(std::move(other.box_)), fd_(other.fd_), serial_(other.serial_) {}

reply& reply::operator=(reply&& other) noexcept {
  if (this != &other) {
    abandon();
    box_ = std::move(other.box_);
    fd_ = other.fd_;
    serial_ = other.serial_;
  }
  return *this;
}

reply::~reply() {
  abandon();
}

void reply::abandon() noexcept {
  if (!box_) return;
  try {
    deliver(error_response(500, "the request handler returned no answer"), true);
  } catch (...) {
    box_.reset();  // out of memory: the answer is lost; stop() or the client ends the wait
  }
}

void reply::send(response r) {
  deliver(std::move(r), false);
}

void reply::deliver(response r, bool dropped) {
  std::shared_ptr<mailbox> box = std::move(box_);
  if (!box) return;
  if (current_box == box.get()) {
    box->owner->complete(fd_, serial_, std::move(r), dropped);
    return;
  }
  try {
    box->post([&] { box->done.push_back(completion{fd_, serial_, std::move(r), dropped}); });
  } catch (...) {
    box_ = std::move(box);  // nothing was queued: still pending (the destructor answers 500)
    throw;
  }
}

// ---- server ----

result<std::unique_ptr<server>> server::start(server_options options, handler h) {
  if (options.threads < 1 || options.threads > 256) {
    return make_error(errc::invalid_argument, "http server: threads must be in 1..256");
  }
  if (options.timeout_s < 1) {
    return make_error(errc::invalid_argument, "http server: timeout_s must be at least 1");
  }
  if (options.reply_timeout_s < 0) {
    return make_error(errc::invalid_argument, "http server: reply_timeout_s must not be negative");
  }
  if (options.max_body_bytes == 0 || options.max_header_bytes < 64 ||
      options.max_connections == 0) {
    return make_error(errc::invalid_argument,
                      "http server: max_body_bytes and max_connections must be positive and "
                      "max_header_bytes at least 64");
  }
  if (options.port < 0 || options.port > 65535) {
    return make_error(errc::invalid_argument, "http server: port must be in 0..65535");
  }
  if (!h) return make_error(errc::invalid_argument, "http server: no request handler");
  std::unique_ptr<server> s(new server());
  s->opt_ = std::move(options);
  s->handler_ = std::move(h);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = s->opt_.host + ":" + std::to_string(s->opt_.port);
  if (const int rc =
          ::getaddrinfo(s->opt_.host.c_str(), std::to_string(s->opt_.port).c_str(), &hints, &found);
      rc != 0) {
    return make_error(errc::invalid_argument, "cannot resolve " + where + ": " + gai_strerror(rc));
  }
  int err = 0;
  for (addrinfo* a = found; a != nullptr && s->listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 4096) == 0) {
      s->listen_fd_ = fd;
    } else {
      err = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (s->listen_fd_ < 0) {
    return make_error(errc::io_error, "cannot listen on " + where + ": " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return make_error(errc::io_error, "getsockname on " + where + ": " + std::strerror(errno));
  }
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  for (int i = 0; i < s->opt_.threads; ++i) {
    s->loops_.push_back(std::make_unique<event_loop>(*s));
    if (status st = s->loops_.back()->init(); !st) return std::move(st).error();
  }
  for (auto& l : s->loops_) {
    s->threads_.emplace_back([loop = l.get()] { loop->run(); });
  }
  return s;
}

server::~server() {
  stop();
}

void server::stop() {
  std::lock_guard lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  stopping_.store(true, std::memory_order_release);
  for (auto& l : loops_) l->wake();
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

}  // namespace simdup::detail::http
