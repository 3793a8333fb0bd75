// Incremental HTTP/1.1 request parser for `simdup serve`: a pure function of the bytes a
// connection has buffered so far and, optionally, of the resume point an earlier call on a prefix
// of them returned (no sockets, no hidden state). The server calls it after reads that can change
// the answer; it answers "need more", "complete request of N bytes" or "error (status, message)".
// Each need_more says which later buffers cannot change the answer (`want`, `lf_from`) and where
// parsing can resume (`resume`), so a head sent a byte at a time or a body of many tiny chunks in
// separate packets costs linear, not quadratic, time.
//
// Rules (RFC 9112, strict where laxness enables request smuggling):
// - Lines end with CRLF. A bare LF or bare CR anywhere in the head or the chunk framing is a 400:
//   accepting bare LF lets a proxy and this server disagree about where a header ends.
// - Empty lines (CRLF) before the request line are skipped (some clients send one after a body).
// - Request line: `token SP origin-form SP HTTP/1.x`. The target must start with '/' (absolute
//   form, authority form and '*' are 400) and holds visible ASCII only; it is split at the first
//   '?' into path (raw, not percent-decoded) and query. HTTP/1.0 and HTTP/1.1 are served; other
//   well-formed versions get 505, anything else 400.
// - Header names are tokens compared case-insensitively; no whitespace before ':'; values are
//   trimmed of spaces and tabs; control characters in values (other than tab) are 400. A line
//   starting with space or tab (obs-fold) is 400. Host is not required (one origin is served).
// - Keep-alive: HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
// - Content-Length: digits only; repeated (as lines or a comma list) only with equal values;
//   overflow is 400; a value above max_body_bytes is 413, decided before any body byte arrives.
// - Transfer-Encoding: exactly `chunked` is decoded (chunk extensions and trailers ignored); any
//   other coding is 501; chunked listed twice is 400; Content-Length together with
//   Transfer-Encoding is 400; Transfer-Encoding on an HTTP/1.0 request is 400 (RFC 9112 6.1: a
//   1.0 recipient may not know chunked, so the framing is ambiguous). The decoded body obeys
//   max_body_bytes (413 as soon as a chunk size says so), the framing (chunk-size lines, CRLFs,
//   trailers) obeys max_chunk_framing_bytes (413), each chunk-size line is at most 1 KiB (400) and
//   the trailers at most max_header_bytes (431).
// - `Expect: 100-continue` on HTTP/1.1 is reported once the head is complete so the server can
//   send `HTTP/1.1 100 Continue` before the body; other expectations are ignored.
// - The head (request line + headers + blank line) is at most max_header_bytes, else 431.
// - A repeated Authorization header is 400 (two credentials are ambiguous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace simdup::detail::http {

/// One parsed request, as handed to the server's handler.
struct request {
  std::string method;         ///< e.g. "GET", case preserved
  std::string path;           ///< target up to the first '?', raw (not percent-decoded)
  std::string query;          ///< target after the first '?' (without it); empty if none
  std::string authorization;  ///< the Authorization header's value; empty if absent
  std::string body;           ///< the body, chunked encoding removed
};

/// Size limits of one request.
struct parser_limits {
  /// Largest head (request line, headers and the blank line ending them), bytes, inclusive.
  std::size_t max_header_bytes = 16384;
  /// Largest body after removing chunked encoding, bytes, inclusive.
  std::size_t max_body_bytes = 16u << 20;
  /// Largest total of chunked framing (chunk-size lines with extensions, CRLFs after chunk data,
  /// trailers), bytes, inclusive. Bounds the bytes buffered beyond the body; 16 KiB allows e.g.
  /// 3,000 one-byte chunks.
  std::size_t max_chunk_framing_bytes = 16u << 10;
};

/// What a head's lines said about framing and the connection.
struct head_flags {
  bool http11 = false;
  bool has_length = false;
  std::uint64_t length = 0;
  bool has_te = false;
  int chunked_codings = 0;
  bool other_coding = false;
  bool conn_close = false;
  bool conn_keep_alive = false;
  bool expect_continue = false;
  bool has_authorization = false;
};

/// What the complete lines of a head said, for resuming (offsets into the buffer). The request
/// line was parsed when method_len is not 0 (a valid method is a non-empty token).
struct head_state {
  std::size_t method_off = 0, method_len = 0;
  std::size_t target_off = 0, target_len = 0;
  std::size_t auth_off = 0, auth_len = 0;  ///< the Authorization value
  head_flags flags;
};

/// Where parsing can resume: returned with need_more, passed back with the same buffer grown
/// (same start), so the head lines and chunks already parsed are not parsed again.
struct parse_resume {
  /// Start of the first head line not yet complete (while head_end is 0).
  std::size_t head_pos = 0;
  /// The head lines before head_pos, or the whole head once head_end is set.
  head_state head;
  /// Length of the (valid) head of a chunked request; 0 while the head is incomplete.
  std::size_t head_end = 0;
  /// Start of the first chunk-size (or trailer) line not yet complete.
  std::size_t pos = 0;
  /// Decoded body bytes and framing bytes before `pos`.
  std::uint64_t body = 0;
  std::size_t framing = 0;
  /// Start of the trailer section; 0 while still in the chunks.
  std::size_t trailers = 0;
};

enum class parse_status {
  need_more,  ///< the buffered bytes are a valid prefix of a request; read more
  complete,   ///< a whole request is at the front of the buffer
  error,      ///< the bytes can never become a valid request; answer `status` and close
};

struct parse_result {
  parse_status state = parse_status::need_more;
  /// complete: bytes of the buffer this request occupies (the next request starts there).
  std::size_t consumed = 0;
  /// need_more: calling again on a longer buffer gives need_more again while it is shorter than
  /// `want` bytes and, unless `lf_from` is npos, holds no LF at an index >= lf_from (lets the
  /// server skip re-parsing while a known-length body or an unfinished line streams in). `want`
  /// is always larger than the size of the buffer that was parsed.
  std::size_t want = 0;
  std::size_t lf_from = std::string_view::npos;  ///< see want; npos: only want counts
  /// need_more: the head is complete.
  bool head_complete = false;
  /// need_more: pass to the next call on the grown buffer.
  parse_resume resume;
  /// need_more or complete: the head is complete and says `Expect: 100-continue`.
  bool expect_continue = false;
  /// need_more (once the head is complete) or complete: the connection stays open after the
  /// answer.
  bool keep_alive = false;
  /// need_more (once the head is complete) or complete: the request line said HTTP/1.1 (else
  /// HTTP/1.0, whose keep-alive answers must say `Connection: keep-alive`).
  bool http11 = false;
  /// error: the HTTP status to answer (400, 413, 431, 501, 505).
  int status = 0;
  /// error: what was wrong, for the JSON error message.
  std::string message;
  /// complete: the request.
  request req;
};

/// Parses the request at the front of `buffered`. Pure: the same bytes (and resume point) give
/// the same answer, and a prefix of a valid request gives need_more. `from`: the `resume` of a
/// need_more answer for a prefix of `buffered` (same limits); the answer is the same as without
/// it, only cheaper.
parse_result parse_request(std::string_view buffered, const parser_limits& limits,
                           const parse_resume& from = {});

/// The JSON error code the service uses for a status the parser or server answers itself:
/// "bad_request" (400), "timeout" (408), "too_large" (413), "header_too_large" (431),
/// "unavailable" (503), "unsupported" (501, 505), "internal" (500).
std::string_view error_code_for(int status) noexcept;

/// Decodes %XX escapes (hex digits of either case) in one path segment; '+' stays '+'.
/// nullopt for a '%' not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace simdup::detail::http
