// libFuzzer harness for the service's request bodies: the document parser, the export name and
// the collection settings parser must answer every input with a value or an error, never crash
// or hang.
// Build: cmake -DSIMDUP_BUILD_FUZZ=ON with clang; run: fuzz_request_fuzz fuzz/corpus/request
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "service/request.hpp"
#include "store/backend.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  simdup::detail::request_limits limits;
  limits.max_documents = 64;
  if (auto r = simdup::detail::parse_request(body, limits)) {
    // A parsed request honours the limits it was given.
    if (r->docs.empty() || r->docs.size() > limits.max_documents) __builtin_trap();
    for (const auto& d : r->docs) {
      if (d.id.empty() || d.id.size() > limits.max_id_bytes) __builtin_trap();
    }
  }
  if (auto name = simdup::detail::parse_export_name(body)) {
    // An accepted export name is one path component.
    if (name->empty() || name->front() == '.' || name->find('/') != std::string::npos) {
      __builtin_trap();
    }
  }
  simdup::detail::collection_config base;
  base.name = "fuzz";
  if (auto c = simdup::detail::config_from_json(body, base)) {
    if (!simdup::detail::validate(*c)) __builtin_trap();
  }
  return 0;
}
