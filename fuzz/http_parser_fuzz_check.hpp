// What fuzz/http_parser_fuzz.cpp checks on every input, shared with the replay test
// (tests/unit/service/http_parser_fuzz_test.cpp) that runs without clang: the HTTP request
// parser never reads past what it is given, answers every prefix with need_more or exactly the
// answer of the whole input (so a server reading byte by byte sees what one reading it all at
// once sees), honours its `want`/`lf_from` hints and its limits, gives the same answers when
// resumed, and is deterministic. check_http_parser() returns "" when all hold, else what broke.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http_parser.hpp"

namespace simdup::fuzz {

/// Small limits, so that fuzzed inputs reach them.
inline detail::http::parser_limits http_fuzz_limits() {
  detail::http::parser_limits l;
  l.max_header_bytes = 512;
  l.max_body_bytes = 256;
  l.max_chunk_framing_bytes = 128;
  return l;
}

inline bool same_answer(const detail::http::parse_result& a, const detail::http::parse_result& b) {
  return a.state == b.state && a.consumed == b.consumed && a.status == b.status &&
         a.message == b.message && a.keep_alive == b.keep_alive && a.http11 == b.http11 &&
         a.expect_continue == b.expect_continue && a.req.method == b.req.method &&
         a.req.path == b.req.path && a.req.query == b.req.query &&
         a.req.authorization == b.req.authorization && a.req.body == b.req.body;
}

/// Checks one answer on its own.
inline std::string check_answer(std::string_view in, const detail::http::parse_result& r,
                                const detail::http::parser_limits& limits) {
  using detail::http::parse_status;
  switch (r.state) {
    case parse_status::need_more:
      if (r.want <= in.size()) return "need_more with want <= bytes given";
      break;
    case parse_status::complete:
      if (r.consumed == 0 || r.consumed > in.size()) return "consumed outside (0, size]";
      if (r.req.body.size() > limits.max_body_bytes) return "body over max_body_bytes";
      if (r.req.method.empty() || r.req.path.empty() || r.req.path.front() != '/') {
        return "complete without method or origin-form path";
      }
      if (r.req.body.size() > r.consumed) return "body larger than the bytes consumed";
      break;
    case parse_status::error:
      if (r.status != 400 && r.status != 413 && r.status != 431 && r.status != 501 &&
          r.status != 505) {
        return "unexpected error status " + std::to_string(r.status);
      }
      if (r.message.empty()) return "error without message";
      break;
  }
  return {};
}

inline std::string check_http_parser(std::string_view in) {
  using detail::http::parse_request;
  using detail::http::parse_status;
  const auto limits = http_fuzz_limits();
  const auto whole = parse_request(in, limits);
  if (auto e = check_answer(in, whole, limits); !e.empty()) return "whole: " + e;
  if (!same_answer(whole, parse_request(in, limits))) return "not deterministic";

  // Every split point: need_more (and nothing but need_more where an earlier need_more's hint
  // says so) or the same answer; parsing from the previous split's resume point agrees.
  std::vector<std::pair<std::size_t, std::size_t>> hints;  // (want, lf_from) of each need_more
  detail::http::parse_resume resume;
  bool decided = false;
  for (std::size_t n = 0; n <= in.size() && !decided; ++n) {
    const auto r = parse_request(in.substr(0, n), limits);
    if (auto e = check_answer(in.substr(0, n), r, limits); !e.empty()) {
      return "prefix " + std::to_string(n) + ": " + e;
    }
    const auto resumed = parse_request(in.substr(0, n), limits, resume);
    if (!same_answer(r, resumed) || r.want != resumed.want || r.lf_from != resumed.lf_from) {
      return "resumed parse disagrees at prefix " + std::to_string(n);
    }
    resume = r.resume;
    if (r.state == parse_status::need_more) {
      hints.emplace_back(r.want, r.lf_from);
      continue;
    }
    for (const auto& [want, lf_from] : hints) {
      const bool lf_seen = lf_from != std::string_view::npos &&
                           in.substr(0, n).find('\n', lf_from) != std::string_view::npos;
      if (n < want && !lf_seen) {
        return "answer at prefix " + std::to_string(n) + " where a need_more's hint forbids it";
      }
    }
    if (!same_answer(r, whole)) return "prefix " + std::to_string(n) + " disagrees with whole";
    decided = true;
  }
  if (!decided && whole.state != parse_status::need_more) return "no prefix gave the answer";

  if (whole.state == parse_status::complete) {
    // The request alone parses the same; what follows it is the next request (pipelining).
    if (!same_answer(parse_request(in.substr(0, whole.consumed), limits), whole)) {
      return "the consumed bytes alone parse differently";
    }
    const std::string_view rest = in.substr(whole.consumed);
    if (auto e = check_answer(rest, parse_request(rest, limits), limits); !e.empty()) {
      return "pipelined: " + e;
    }
  }

  const auto decoded = detail::http::percent_decode(in);
  if (decoded && decoded->size() > in.size()) return "percent_decode grew the input";
  if (in.find('%') == std::string_view::npos && decoded != std::optional<std::string>(in)) {
    return "percent_decode changed an input without '%'";
  }
  return {};
}

}  // namespace simdup::fuzz
