// libFuzzer harness for the HTTP/1.1 request parser of `simdup serve` (the first thing every
// network byte meets). The invariants are in http_parser_fuzz_check.hpp.
// Build: cmake -DSIMDUP_BUILD_FUZZ=ON with clang; run: fuzz_http_parser_fuzz fuzz/corpus/http
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http_parser_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Every split point is parsed, so keep inputs small enough for many runs per second.
  if (size > 4096) return -1;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (!simdup::fuzz::check_http_parser(in).empty()) __builtin_trap();
  return 0;
}
