// HTTP/1.1 request parsing; the rules are listed in http_parser.hpp.
//
// Every check is made in byte order and a limit is reported as soon as the bytes seen prove it
// will be exceeded, so parsing any prefix of a buffer gives either need_more or exactly the
// answer the whole buffer gives (the fuzz harness checks this).
#include "service/http_parser.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "util/ascii.hpp"

namespace simdup::detail::http {
namespace {

constexpr std::size_t npos = std::string_view::npos;
/// Longest chunk-size line (size, extensions, CRLF), bytes, inclusive.
constexpr std::size_t max_chunk_line_bytes = 1024;

bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!is_tchar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

/// Control characters other than horizontal tab (CR and LF included).
bool is_ctl(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}

/// Calls fn(item) for each trimmed, non-empty element of a comma-separated list.
template <class Fn>
void for_each_item(std::string_view list, Fn&& fn) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = trim_blanks(list.substr(0, comma));
    if (!item.empty()) fn(item);
    if (comma == npos) break;
    list.remove_prefix(comma + 1);
  }
}

parse_result fail(int status, std::string message) {
  parse_result r;
  r.state = parse_status::error;
  r.status = status;
  r.message = std::move(message);
  return r;
}

parse_result more(std::size_t want) {
  parse_result r;
  r.want = want;
  return r;
}

/// Where the line starting at `start` ends. found: `end` is the index of its CR and `next` the
/// index after its LF. The line (with CRLF) must end at or before `limit`; if the bytes prove
/// it cannot, `over_limit` is set.
struct line {
  bool found = false;
  bool over_limit = false;
  bool bare_lf = false;
  std::size_t end = 0;
  std::size_t next = 0;
};

line find_line(std::string_view in, std::size_t start, std::size_t limit) {
  line l;
  const void* p =
      start < in.size() ? std::memchr(in.data() + start, '\n', in.size() - start) : nullptr;
  if (p == nullptr) {
    // The LF, if it comes, is at index >= in.size(), so the line ends after in.size() + 1.
    l.over_limit = in.size() + 1 > limit;
    return l;
  }
  const std::size_t lf = static_cast<std::size_t>(static_cast<const char*>(p) - in.data());
  if (lf + 1 > limit) {
    l.over_limit = true;
    return l;
  }
  l.found = true;
  l.bare_lf = lf == start || in[lf - 1] != '\r';
  l.end = lf - 1;
  l.next = lf + 1;
  return l;
}

/// Parses an unsigned number in `base` (10 or 16), saturating at a value above any limit.
/// false if `s` is empty or has a non-digit.
bool parse_number(std::string_view s, unsigned base, std::uint64_t& out) {
  constexpr std::uint64_t saturated = std::uint64_t{1} << 62;
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a' + 10);
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      d = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return false;
    }
    v = v > (saturated - d) / base ? saturated : v * base + d;
  }
  out = v;
  return true;
}

/// What the head (request line and headers) says.
struct head : head_flags {
  std::string_view method, target;
  std::string_view authorization;
};

/// Parses "METHOD SP TARGET SP HTTP/x.y" into `h`; an error result, or nullopt when it is valid.
std::optional<parse_result> parse_request_line(std::string_view l, head& h) {
  const std::size_t sp1 = l.find(' ');
  const std::size_t sp2 = sp1 == npos ? npos : l.find(' ', sp1 + 1);
  if (sp2 == npos) return fail(400, "malformed request line");
  h.method = l.substr(0, sp1);
  h.target = l.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = l.substr(sp2 + 1);
  if (!is_token(h.method)) return fail(400, "malformed request method");
  if (h.target.empty()) return fail(400, "empty request target");
  for (const char c : h.target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return fail(400, "invalid character in request target");
  }
  if (h.target.front() != '/') {
    return fail(400, "request target must be a path starting with '/' (origin-form)");
  }
  const bool shaped = version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[5] >= '0' &&
                      version[5] <= '9' && version[6] == '.' && version[7] >= '0' &&
                      version[7] <= '9';
  if (!shaped) return fail(400, "malformed HTTP version");
  if (version == "HTTP/1.1") {
    h.http11 = true;
  } else if (version != "HTTP/1.0") {
    return fail(505, "HTTP version " + std::string(version.substr(5)) + " is not supported");
  }
  return std::nullopt;
}

/// Parses one header line into `h`; an error result, or nullopt when it is valid.
std::optional<parse_result> parse_header(std::string_view l, head& h) {
  if (l.front() == ' ' || l.front() == '\t') {
    return fail(400, "folded header line (obs-fold) is not allowed");
  }
  const std::size_t colon = l.find(':');
  if (colon == npos) return fail(400, "header line without ':'");
  const std::string_view name = l.substr(0, colon);
  if (!is_token(name)) return fail(400, "malformed header name");
  const std::string_view value = trim_blanks(l.substr(colon + 1));
  for (const char c : value) {
    if (is_ctl(static_cast<unsigned char>(c))) {
      return fail(400, "control character in header " + std::string(name));
    }
  }
  if (iequals(name, "content-length")) {
    bool ok = true;
    bool any = false;
    for_each_item(value, [&](std::string_view item) {
      std::uint64_t v = 0;
      any = true;
      if (!parse_number(item, 10, v)) {
        ok = false;
      } else if (h.has_length && v != h.length) {
        ok = false;
      } else {
        h.has_length = true;
        h.length = v;
      }
    });
    if (!ok || !any) return fail(400, "invalid or conflicting Content-Length");
    if (h.length >= (std::uint64_t{1} << 62)) return fail(400, "Content-Length out of range");
  } else if (iequals(name, "transfer-encoding")) {
    h.has_te = true;
    for_each_item(value, [&](std::string_view item) {
      if (iequals(item, "chunked")) {
        ++h.chunked_codings;
      } else {
        h.other_coding = true;
      }
    });
  } else if (iequals(name, "connection")) {
    for_each_item(value, [&](std::string_view item) {
      if (iequals(item, "close")) h.conn_close = true;
      if (iequals(item, "keep-alive")) h.conn_keep_alive = true;
    });
  } else if (iequals(name, "expect")) {
    if (iequals(value, "100-continue")) h.expect_continue = true;
  } else if (iequals(name, "authorization")) {
    if (h.has_authorization) return fail(400, "more than one Authorization header");
    h.has_authorization = true;
    h.authorization = value;
  }
  return std::nullopt;
}

parse_result framing_too_large(const parser_limits& limits) {
  return fail(413, "chunked framing exceeds " + std::to_string(limits.max_chunk_framing_bytes) +
                       " bytes; send larger chunks");
}

/// need_more at the unfinished line starting at `w.pos`: only an LF or reaching the line's limit
/// (`limit`, where find_line reports over_limit) can change the answer.
parse_result more_line(std::string_view in, const parse_resume& w, std::size_t limit) {
  parse_result r = more(std::max(limit, in.size() + 1));
  r.lf_from = in.size();
  r.resume = w;
  return r;
}

/// Walks a chunked body from the resume point `w` (a chunk-size line, or with w.trailers a
/// trailer line). With `out`, appends the decoded data (call it so only on a walk from the
/// start of the body, once the walk without `out` said complete).
parse_result walk_chunked(std::string_view in, parse_resume w, const parser_limits& limits,
                          std::string* out) {
  while (w.trailers == 0) {
    const std::size_t limit = w.pos + max_chunk_line_bytes;
    const line l = find_line(in, w.pos, limit);
    if (l.over_limit) return fail(400, "chunk-size line longer than 1024 bytes");
    if (!l.found) return more_line(in, w, limit);
    if (l.bare_lf) return fail(400, "chunk-size line must end with CRLF");
    const std::string_view text = in.substr(w.pos, l.end - w.pos);
    std::size_t digits = 0;
    while (digits < text.size() && std::isxdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    std::string_view rest = text.substr(digits);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    std::uint64_t size = 0;
    if (!parse_number(text.substr(0, digits), 16, size) || (!rest.empty() && rest.front() != ';')) {
      return fail(400, "malformed chunk size");
    }
    for (const char c : rest) {
      if (is_ctl(static_cast<unsigned char>(c)))
        return fail(400, "control character in chunk extension");
    }
    const std::size_t framing = w.framing + (l.next - w.pos);
    if (framing > limits.max_chunk_framing_bytes) return framing_too_large(limits);
    const std::uint64_t body = w.body + size;
    if (body > limits.max_body_bytes) {
      return fail(413, "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
    }
    if (size == 0) {
      w.pos = w.trailers = l.next;
      w.framing = framing;
      break;
    }
    const std::size_t data = l.next;
    const std::size_t data_end = data + static_cast<std::size_t>(size);
    if (in.size() < data_end + 2) {
      parse_result r = more(data_end + 2);
      r.resume = w;  // resumes at this chunk's size line
      return r;
    }
    if (in[data_end] != '\r' || in[data_end + 1] != '\n') {
      return fail(400, "chunk data not followed by CRLF");
    }
    if (out != nullptr) out->append(in.substr(data, static_cast<std::size_t>(size)));
    if (framing + 2 > limits.max_chunk_framing_bytes) return framing_too_large(limits);
    w.framing = framing + 2;
    w.body = body;
    w.pos = data_end + 2;
  }
  // Trailer fields, ignored; the section ends with an empty line.
  for (;;) {
    const std::size_t limit = w.trailers + limits.max_header_bytes;
    const line l = find_line(in, w.pos, limit);
    if (l.over_limit) {
      return fail(431,
                  "trailer section exceeds " + std::to_string(limits.max_header_bytes) + " bytes");
    }
    if (!l.found) return more_line(in, w, limit);
    if (l.bare_lf) return fail(400, "trailer line must end with CRLF");
    for (std::size_t i = w.pos; i < l.end; ++i) {
      if (is_ctl(static_cast<unsigned char>(in[i])))
        return fail(400, "control character in trailer");
    }
    w.framing += l.next - w.pos;
    if (w.framing > limits.max_chunk_framing_bytes) return framing_too_large(limits);
    const bool last = l.end == w.pos;
    w.pos = l.next;
    if (last) break;
  }
  parse_result r;
  r.state = parse_status::complete;
  r.consumed = w.pos;
  // The checking walk sizes the body the decoding walk then fills.
  if (out == nullptr) r.req.body.reserve(static_cast<std::size_t>(w.body));
  return r;
}

/// Walks the chunks on from `from`, checking only; once the body is complete, decodes it in one
/// more walk from the first chunk.
parse_result walk_and_decode(std::string_view in, const parse_resume& from,
                             const parser_limits& limits) {
  // A walk from the body's first byte (usually the whole request in one read) decodes as it
  // checks; one resumed from a later chunk decodes the whole body again once it is complete.
  if (from.pos == from.head_end) {
    std::string body;
    parse_result r = walk_chunked(in, from, limits, &body);
    if (r.state == parse_status::complete) r.req.body = std::move(body);
    return r;
  }
  parse_result r = walk_chunked(in, from, limits, nullptr);
  if (r.state == parse_status::complete) {
    parse_resume start;
    start.head_end = start.pos = from.head_end;
    walk_chunked(in, start, limits, &r.req.body);
  }
  return r;
}

/// Positions of the head's views, to resume on a buffer that moved.
head_state save(const head& h, std::string_view in) {
  const auto off = [&](std::string_view v) {
    return v.empty() ? std::size_t{0} : static_cast<std::size_t>(v.data() - in.data());
  };
  head_state s;
  s.method_off = off(h.method);
  s.method_len = h.method.size();
  s.target_off = off(h.target);
  s.target_len = h.target.size();
  s.auth_off = off(h.authorization);
  s.auth_len = h.authorization.size();
  s.flags = h;
  return s;
}

head load(const head_state& s, std::string_view in) {
  head h;
  h.method = in.substr(s.method_off, s.method_len);
  h.target = in.substr(s.target_off, s.target_len);
  h.authorization = in.substr(s.auth_off, s.auth_len);
  static_cast<head_flags&>(h) = s.flags;
  return h;
}

/// Parses the head from the resume point `from`. need_more or error: the answer; complete: the
/// head is in `h` and ends at `head_end`.
parse_result parse_head(std::string_view in, const parser_limits& limits, const parse_resume& from,
                        head& h, std::size_t& head_end) {
  std::size_t pos = from.head_pos;
  bool have_request_line = from.head.method_len != 0;
  for (;;) {
    const line l = find_line(in, pos, limits.max_header_bytes);
    if (l.over_limit) {
      return fail(431,
                  "request head exceeds " + std::to_string(limits.max_header_bytes) + " bytes");
    }
    if (!l.found) {
      parse_result r = more(std::max(limits.max_header_bytes, in.size() + 1));
      r.lf_from = in.size();
      r.resume.head_pos = pos;
      r.resume.head = save(h, in);
      return r;
    }
    if (l.bare_lf) return fail(400, "header lines must end with CRLF");
    const std::string_view text = in.substr(pos, l.end - pos);
    pos = l.next;
    if (!have_request_line) {
      if (text.empty()) continue;  // empty lines before the request line are skipped
      if (auto error = parse_request_line(text, h)) return *std::move(error);
      have_request_line = true;
      continue;
    }
    if (text.empty()) break;
    if (auto error = parse_header(text, h)) return *std::move(error);
  }
  head_end = pos;
  if (h.has_te && h.has_length) return fail(400, "both Content-Length and Transfer-Encoding");
  if (h.has_te) {
    if (!h.http11) return fail(400, "Transfer-Encoding is not allowed in an HTTP/1.0 request");
    if (h.other_coding) return fail(501, "only the chunked transfer coding is supported");
    if (h.chunked_codings != 1) return fail(400, "invalid Transfer-Encoding");
  }
  if (h.has_length && h.length > limits.max_body_bytes) {
    return fail(413, "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
  }
  parse_result r;
  r.state = parse_status::complete;
  return r;
}

}  // namespace

parse_result parse_request(std::string_view in, const parser_limits& limits,
                           const parse_resume& from) {
  head h = load(from.head, in);
  parse_result r;
  if (from.head_end > 0) {
    // The head and the chunks before from.pos were valid in a prefix of `in`: walk on from there.
    r = walk_and_decode(in, from, limits);
  } else {
    std::size_t head_end = 0;
    r = parse_head(in, limits, from, h, head_end);
    if (r.state != parse_status::complete) return r;
    if (h.has_te) {
      parse_resume start;
      start.head = save(h, in);
      start.head_end = start.pos = head_end;
      r = walk_and_decode(in, start, limits);
    } else {
      const std::size_t end = head_end + static_cast<std::size_t>(h.length);
      if (in.size() < end) {
        r = more(end);
      } else {
        r.consumed = end;
        r.req.body.assign(in.substr(head_end, end - head_end));
      }
    }
  }
  if (r.state == parse_status::error) return r;
  r.keep_alive = h.http11 ? !h.conn_close : (h.conn_keep_alive && !h.conn_close);
  r.expect_continue = h.http11 && h.expect_continue;
  r.http11 = h.http11;
  r.head_complete = r.state == parse_status::need_more;
  if (r.state == parse_status::complete) {
    r.req.method.assign(h.method);
    const std::size_t q = h.target.find('?');
    r.req.path.assign(h.target.substr(0, q));
    if (q != npos) r.req.query.assign(h.target.substr(q + 1));
    r.req.authorization.assign(h.authorization);
  }
  return r;
}

std::string_view error_code_for(int status) noexcept {
  switch (status) {
    case 400:
      return "bad_request";
    case 408:
      return "timeout";
    case 413:
      return "too_large";
    case 431:
      return "header_too_large";
    case 501:
    case 505:
      return "unsupported";
    case 503:
      return "unavailable";
    default:
      return "internal";
  }
}

std::optional<std::string> percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]);
    const int lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace simdup::detail::http
