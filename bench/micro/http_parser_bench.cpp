// The HTTP request parser on what `simdup serve` receives most: one single-document
// check-insert (about 200 bytes, as the load generator sends it), and a pipelined burst of them.
// Items/s counts requests.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

#include "service/http_parser.hpp"

namespace {

const std::string& single_request() {
  static const std::string req =
      "POST /v1/news/check-insert HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
      "Content-Type: application/json\r\nContent-Length: 52\r\n\r\n"
      "{\"id\":\"doc-000123\",\"fingerprint\":\"0123456789abcdef\"}";
  return req;
}

void BM_HttpParseSingle(benchmark::State& state) {
  const std::string& req = single_request();
  const simdup::detail::http::parser_limits limits;
  for (auto _ : state) {
    auto r = simdup::detail::http::parse_request(req, limits);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * req.size()));
}
BENCHMARK(BM_HttpParseSingle);

void BM_HttpParsePipelined(benchmark::State& state) {
  std::string burst;
  for (int i = 0; i < 64; ++i) burst += single_request();
  const simdup::detail::http::parser_limits limits;
  for (auto _ : state) {
    std::string_view rest = burst;
    while (!rest.empty()) {
      auto r = simdup::detail::http::parse_request(rest, limits);
      if (r.state != simdup::detail::http::parse_status::complete) {
        state.SkipWithError("the burst did not parse");
        return;
      }
      benchmark::DoNotOptimize(r);
      rest.remove_prefix(r.consumed);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 64));
}
BENCHMARK(BM_HttpParsePipelined);

}  // namespace
