// The HTTP/1.1 request parser: each rule of http_parser.hpp, byte-at-a-time feeding, pipelining,
// chunked decoding and the limits.
#include "service/http_parser.hpp"

#include <gtest/gtest.h>

#include <string>

namespace simdup::detail::http {
namespace {

constexpr std::size_t npos_ = std::string_view::npos;

parser_limits small_limits() {
  parser_limits l;
  l.max_header_bytes = 256;
  l.max_body_bytes = 100;
  l.max_chunk_framing_bytes = 200;
  return l;
}

/// Parses `whole`, and checks that every shorter prefix gives need_more (honouring the `want` and
/// `lf_from` hints) or the same answer, as a server reading one byte at a time would see, also
/// when each parse resumes where the previous one stopped.
parse_result parse_fed(std::string_view whole, const parser_limits& limits = {}) {
  const parse_result full = parse_request(whole, limits);
  std::size_t skip_until = 0;
  std::size_t lf_from = std::string_view::npos;
  parse_resume resume;
  for (std::size_t n = 0; n <= whole.size(); ++n) {
    const parse_result r = parse_request(whole.substr(0, n), limits);
    const parse_result resumed = parse_request(whole.substr(0, n), limits, resume);
    EXPECT_EQ(resumed.state, r.state) << "prefix " << n;
    EXPECT_EQ(resumed.want, r.want) << "prefix " << n;
    EXPECT_EQ(resumed.req.body, r.req.body) << "prefix " << n;
    resume = r.resume;
    const bool lf_seen =
        lf_from != std::string_view::npos && whole.substr(0, n).find('\n', lf_from) != npos_;
    if (n < skip_until && !lf_seen) {
      EXPECT_EQ(r.state, parse_status::need_more) << "prefix " << n << " inside the hint";
    }
    if (r.state == parse_status::need_more) {
      EXPECT_GT(r.want, n);
      skip_until = r.want;
      lf_from = r.lf_from;
      continue;
    }
    EXPECT_EQ(r.state, full.state) << "prefix " << n;
    EXPECT_EQ(r.status, full.status) << "prefix " << n;
    EXPECT_EQ(r.consumed, full.consumed) << "prefix " << n;
    EXPECT_EQ(r.req.body, full.req.body) << "prefix " << n;
    break;
  }
  return full;
}

parse_result expect_error(std::string_view whole, int status, const parser_limits& limits = {}) {
  parse_result r = parse_fed(whole, limits);
  EXPECT_EQ(r.state, parse_status::error) << whole;
  EXPECT_EQ(r.status, status) << whole << " -> " << r.message;
  EXPECT_FALSE(r.message.empty());
  return r;
}

parse_result expect_complete(std::string_view whole, const parser_limits& limits = {}) {
  parse_result r = parse_fed(whole, limits);
  EXPECT_EQ(r.state, parse_status::complete) << whole << " -> " << r.message;
  return r;
}

TEST(HttpParser, SimpleGet) {
  const std::string in = "GET /v1/news/stats?x=1&y=%20 HTTP/1.1\r\nHost: a\r\n\r\n";
  const auto r = expect_complete(in);
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.req.method, "GET");
  EXPECT_EQ(r.req.path, "/v1/news/stats");
  EXPECT_EQ(r.req.query, "x=1&y=%20");
  EXPECT_TRUE(r.req.body.empty());
  EXPECT_TRUE(r.req.authorization.empty());
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.expect_continue);
}

TEST(HttpParser, PrefixesNeedMore) {
  const std::string in = "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  for (std::size_t n = 0; n < in.size(); ++n) {
    EXPECT_EQ(parse_request(std::string_view(in).substr(0, n), {}).state, parse_status::need_more);
  }
  // Once the head is parsed the server can wait for the whole body before parsing again.
  const auto head = parse_request(std::string_view(in).substr(0, in.size() - 3), {});
  EXPECT_EQ(head.want, in.size());
  EXPECT_EQ(expect_complete(in).req.body, "hello");
}

TEST(HttpParser, PipelinedRequestsParseOneAfterAnother) {
  const std::string in =
      "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
      "GET /b HTTP/1.1\r\n\r\n"
      "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n";
  std::string_view rest = in;
  std::vector<std::string> got;
  while (!rest.empty()) {
    const auto r = parse_request(rest, {});
    ASSERT_EQ(r.state, parse_status::complete) << r.message;
    got.push_back(r.req.path + ":" + r.req.body);
    rest.remove_prefix(r.consumed);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"/a:abc", "/b:", "/c:xy"}));
}

TEST(HttpParser, LeadingEmptyLinesAreSkipped) {
  const auto r = expect_complete("\r\n\r\nGET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.req.path, "/");
  EXPECT_EQ(r.consumed, 22u);
}

TEST(HttpParser, KeepAliveRules) {
  EXPECT_TRUE(expect_complete("GET / HTTP/1.1\r\n\r\n").keep_alive);
  EXPECT_FALSE(expect_complete("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
  EXPECT_FALSE(expect_complete("GET / HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n").keep_alive);
  EXPECT_FALSE(expect_complete("GET / HTTP/1.0\r\n\r\n").keep_alive);
  EXPECT_TRUE(expect_complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
  EXPECT_FALSE(
      expect_complete("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n").keep_alive);
}

TEST(HttpParser, HeaderNamesAreCaseInsensitiveAndValuesTrimmed) {
  const auto r = expect_complete(
      "PUT /x HTTP/1.1\r\ncOnTeNt-LeNgTh:  \t2 \r\nAUTHORIZATION:\tBearer abc  \r\n\r\nok");
  EXPECT_EQ(r.req.method, "PUT");
  EXPECT_EQ(r.req.body, "ok");
  EXPECT_EQ(r.req.authorization, "Bearer abc");
}

TEST(HttpParser, RequestLineErrors) {
  expect_error("GET http://a.example/ HTTP/1.1\r\n\r\n", 400);  // absolute form
  expect_error("OPTIONS * HTTP/1.1\r\n\r\n", 400);
  expect_error("CONNECT a.example:443 HTTP/1.1\r\n\r\n", 400);
  expect_error("GET  / HTTP/1.1\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1 \r\n\r\n", 400);
  expect_error("GET /\x01 HTTP/1.1\r\n\r\n", 400);
  expect_error("GET /\xc3\xa9 HTTP/1.1\r\n\r\n", 400);
  expect_error("G(T / HTTP/1.1\r\n\r\n", 400);
  expect_error("GET / HTTP/1.12\r\n\r\n", 400);
  expect_error("GET / http/1.1\r\n\r\n", 400);
  expect_error("GET /\r\n\r\n", 400);  // HTTP/0.9
  expect_error("GET / HTTP/2.0\r\n\r\n", 505);
  expect_error("GET / HTTP/1.2\r\n\r\n", 505);
}

TEST(HttpParser, HeaderLineErrors) {
  expect_error("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\n\tfolded\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nno colon\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\n: empty\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n", 400);
  // Non-ASCII header values (obs-text) are allowed.
  expect_complete("GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9\r\n\r\n");
}

TEST(HttpParser, BareLineFeedsAreRejected) {
  expect_error("GET / HTTP/1.1\n\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost: a\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\n\n", 400);
  expect_error("\nGET / HTTP/1.1\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n", 400);
}

TEST(HttpParser, ContentLengthRules) {
  EXPECT_EQ(expect_complete("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
                .req.body,
            "abc");
  EXPECT_EQ(expect_complete("POST / HTTP/1.1\r\nContent-Length: 3, 003\r\n\r\nabc").req.body,
            "abc");
  expect_error("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\nabcd", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 3a\r\n\r\nabc", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\nabc", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 18446744073709551617\r\n\r\n", 400);
  EXPECT_EQ(expect_complete("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").consumed, 38u);
}

TEST(HttpParser, BodyLimitIsDecidedFromTheHead) {
  const parser_limits limits = small_limits();
  // 413 before any body byte arrives, so the server need not read it.
  const auto r = parse_request("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", limits);
  EXPECT_EQ(r.state, parse_status::error);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(error_code_for(r.status), "too_large");
  const std::string body(100, 'x');
  EXPECT_EQ(
      expect_complete("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + body, limits).req.body,
      body);
}

TEST(HttpParser, ChunkedBodyIsDecoded) {
  const std::string in =
      "POST /c HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "5;name=\"v\"\r\nhello\r\n"
      "1 ; x\r\n \r\n"
      "A\r\n0123456789\r\n"
      "0\r\nX-Trailer: ignored\r\nOther: too\r\n\r\n"
      "GET /next HTTP/1.1\r\n\r\n";
  const auto r = expect_complete(in);
  EXPECT_EQ(r.req.body, "hello 0123456789");
  EXPECT_EQ(std::string_view(in).substr(r.consumed), "GET /next HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(r.keep_alive);
  EXPECT_EQ(
      expect_complete("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").req.body,
      "");
}

TEST(HttpParser, ChunkedErrors) {
  const std::string h = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_error(h + "g\r\n", 400);
  expect_error(h + "\r\n", 400);
  expect_error(h + "-1\r\n", 400);
  expect_error(h + "2 x\r\n", 400);
  expect_error(h + "2\r\nabc\r\n", 400);  // data longer than the size
  expect_error(h + "1\r\na\r\n0\r\nT: \x01\r\n\r\n", 400);
  expect_error(h + "1;" + std::string(1100, 'e') + "\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", 501);
  expect_error(
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", 400);
}

TEST(HttpParser, TransferEncodingInHttp10IsRejected) {
  // RFC 9112 6.1: chunked framing from a 1.0 client is ambiguous (request smuggling).
  const auto r = expect_error(
      "POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
      "1\r\nx\r\n0\r\n\r\n",
      400);
  EXPECT_NE(r.message.find("HTTP/1.0"), std::string::npos) << r.message;
  expect_error("POST / HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
}

TEST(HttpParser, HeadSentByteByByteIsParsedInLinearTime) {
  // 2,000 header lines, one byte per read, parsed the way the server does (see below).
  const std::string request_line = "GET /x?q HTTP/1.1\r\n";
  std::string in = request_line;
  for (int i = 0; i < 2000; ++i) in += "A: b\r\n";
  in += "\r\n";
  parser_limits limits;
  limits.max_header_bytes = in.size();
  parse_result r;
  std::size_t walked = 0;
  std::string wrecked;  // the header lines before each resume point overwritten
  std::size_t wrecked_to = request_line.size();
  for (std::size_t end = 1; r.state == parse_status::need_more && end <= in.size(); ++end) {
    wrecked.push_back(in[end - 1]);
    const bool lf = r.lf_from != npos_ && wrecked.find('\n', r.lf_from) != npos_;
    if (end > 1 && end < r.want && !lf) continue;
    walked += end - r.resume.head_pos;
    r = parse_request(wrecked, limits, r.resume);
    if (r.state == parse_status::need_more && r.resume.head_pos > wrecked_to) {
      std::fill(wrecked.begin() + static_cast<std::ptrdiff_t>(wrecked_to),
                wrecked.begin() + static_cast<std::ptrdiff_t>(r.resume.head_pos), 'Z');
      wrecked_to = r.resume.head_pos;
    }
  }
  ASSERT_EQ(r.state, parse_status::complete) << r.message;
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.req.method, "GET");
  EXPECT_EQ(r.req.path, "/x");
  EXPECT_EQ(r.req.query, "q");
  EXPECT_LT(walked, 2 * in.size());
}

TEST(HttpParser, TinyChunksInSmallPiecesParseInLinearTime) {
  // 3,000 one-byte chunks arriving 2 bytes at a time, parsed the way the server does: only when
  // the hints allow a different answer, resuming where the last parse stopped.
  parser_limits limits;
  std::string in = "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::size_t head = in.size();
  constexpr int chunks = 3000;
  for (int i = 0; i < chunks; ++i)
    in += "1\r\n" + std::string(1, static_cast<char>('a' + i % 26)) + "\r\n";
  in += "0\r\n\r\n";
  parse_result r;
  std::size_t parses = 0;
  std::size_t walked = 0;  // bytes from the resume point to the end of the buffer, summed
  // What arrived, with the chunks before each resume point overwritten: a parse that walked
  // them again would fail. Only the final parse (which builds the body) needs intact bytes.
  std::string wrecked;
  std::size_t wrecked_to = head;
  std::size_t intact_parses = 0;
  for (std::size_t end = 2; r.state == parse_status::need_more && end <= in.size(); end += 2) {
    wrecked.append(in, wrecked.size(), end - wrecked.size());
    const bool lf = r.lf_from != npos_ && wrecked.find('\n', r.lf_from) != npos_;
    if (parses > 0 && end < r.want && !lf) continue;
    const parse_resume from = r.resume;
    walked += end - (from.head_end > 0 ? from.pos : 0);
    ++parses;
    r = parse_request(wrecked, limits, from);
    if (r.state != parse_status::need_more) {
      ++intact_parses;
      r = parse_request(std::string_view(in).substr(0, end), limits, from);
    } else if (r.resume.head_end > 0) {
      ASSERT_GE(r.resume.pos, wrecked_to);
      std::fill(wrecked.begin() + static_cast<std::ptrdiff_t>(wrecked_to),
                wrecked.begin() + static_cast<std::ptrdiff_t>(r.resume.pos), 'Z');
      wrecked_to = r.resume.pos;
    }
    if (end < in.size() && end + 2 > in.size()) end = in.size() - 2;  // last piece: 1 byte
  }
  ASSERT_EQ(r.state, parse_status::complete) << r.message;
  EXPECT_EQ(intact_parses, 1u);
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.req.body.size(), static_cast<std::size_t>(chunks));
  EXPECT_EQ(r.req.body.substr(0, 3), "abc");
  EXPECT_LE(parses, 2u * chunks + 10);
  // Linear: each parse walks only the bytes since the last resume point (a few chunks).
  EXPECT_LT(walked, 8 * in.size());
}

TEST(HttpParser, ChunkedLimits) {
  const parser_limits limits = small_limits();
  const std::string h = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  // The decoded size counts, not the encoded one; over the limit is known from the size line.
  EXPECT_EQ(expect_complete(h + "32\r\n" + std::string(50, 'a') + "\r\n32\r\n" +
                                std::string(50, 'b') + "\r\n0\r\n\r\n",
                            limits)
                .req.body.size(),
            100u);
  expect_error(h + "32\r\n" + std::string(50, 'a') + "\r\n33\r\n", 413, limits);
  expect_error(h + "ffffffffffffffffffffffff\r\n", 413, limits);
  // Tiny chunks: the framing limit stops a body made mostly of chunk-size lines.
  std::string tiny = h;
  for (int i = 0; i < 60; ++i) tiny += "1\r\nx\r\n";
  expect_error(tiny, 413, limits);
  // Trailers obey the head limit.
  parser_limits roomy = limits;
  roomy.max_chunk_framing_bytes = 10000;
  expect_error(h + "0\r\nT: " + std::string(300, 't') + "\r\n\r\n", 431, roomy);
}

TEST(HttpParser, ExpectContinueIsReportedOnceTheHeadIsComplete) {
  const std::string head = "POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n";
  const auto r = parse_request(head, {});
  EXPECT_EQ(r.state, parse_status::need_more);
  EXPECT_TRUE(r.expect_continue);
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(
      parse_request(std::string_view(head).substr(0, head.size() - 2), {}).expect_continue);
  EXPECT_EQ(expect_complete(head + "body").req.body, "body");
  // HTTP/1.0 clients cannot expect it.
  EXPECT_FALSE(
      parse_request("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n", {})
          .expect_continue);
  // An Expect: 100-continue with a body too large is answered 413 at once.
  expect_error("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n", 413,
               small_limits());
}

TEST(HttpParser, HeadLimit) {
  const parser_limits limits = small_limits();
  const std::string start = "GET / HTTP/1.1\r\nX: ";
  // Exactly max_header_bytes is accepted; one byte more is 431.
  const std::string fits = start + std::string(256 - start.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 256u);
  expect_complete(fits, limits);
  expect_error(start + std::string(256 - start.size() - 3, 'a') + "\r\n\r\n", 431, limits);
  // A head that never ends is rejected once the limit's worth of bytes has arrived.
  const auto r = parse_request(start + std::string(300, 'a'), limits);
  EXPECT_EQ(r.state, parse_status::error);
  EXPECT_EQ(r.status, 431);
  EXPECT_EQ(error_code_for(431), "header_too_large");
  // Many small headers count too.
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 40; ++i) many += "A: b\r\n";
  expect_error(many + "\r\n", 431, limits);
}

TEST(HttpParser, ErrorCodes) {
  EXPECT_EQ(error_code_for(400), "bad_request");
  EXPECT_EQ(error_code_for(501), "unsupported");
  EXPECT_EQ(error_code_for(505), "unsupported");
  EXPECT_EQ(error_code_for(503), "unavailable");
  EXPECT_EQ(error_code_for(500), "internal");
}

TEST(HttpParser, PercentDecode) {
  EXPECT_EQ(percent_decode("abc"), "abc");
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("a%20b%2Fc%2f"), "a b/c/");
  EXPECT_EQ(percent_decode("%e4%B8%AD+x"), "\xe4\xb8\xad+x");
  EXPECT_EQ(percent_decode("%00"), std::string(1, '\0'));
  EXPECT_EQ(percent_decode("%"), std::nullopt);
  EXPECT_EQ(percent_decode("a%2"), std::nullopt);
  EXPECT_EQ(percent_decode("%g0"), std::nullopt);
  EXPECT_EQ(percent_decode("%0g"), std::nullopt);
}

}  // namespace
}  // namespace simdup::detail::http
