// Parsing and validation of request bodies (untrusted input: covered by fuzz/request_fuzz.cpp).
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// One document of a request: {"id": ..., "text": ...} or {"id": ..., "fingerprint": "<16 hex>"}
/// (or the fingerprint as an unsigned 64-bit integer), optionally "time" (integer seconds since
/// the epoch). Other fields are ignored.
struct parsed_doc {
  std::string id;
  std::optional<uint64_t> fingerprint;  ///< set when given as "fingerprint"
  std::string text;                     ///< when no fingerprint was given
  std::optional<int64_t> time;
};

struct parsed_request {
  /// true for {"documents": [...]}: the answer is {"results": [...]}.
  bool batch = false;
  std::vector<parsed_doc> docs;
};

struct request_limits {
  /// Most documents per request (inclusive).
  std::size_t max_documents = 1000;
  /// Longest id in bytes (inclusive).
  std::size_t max_id_bytes = 1024;
};

/// Ill-formed UTF-8 is repaired as the CLI does (each ill-formed sequence becomes U+FFFD).
/// Errors: errc::invalid_input (malformed JSON, missing or mistyped field, bad fingerprint; the
/// message names the field and the document's position) or errc::too_large (document limit).
result<parsed_request> parse_request(std::string_view body, const request_limits& limits);

/// The "name" of a POST /v1/{collection}/export body, {"name": "NAME"} (other fields are
/// ignored): one path component, 1 to 64 characters of [A-Za-z0-9_.-] not starting with '.' (no
/// ".", "..", or hidden directory). errc::invalid_input for malformed JSON or no string "name",
/// invalid_argument for another name.
result<std::string> parse_export_name(std::string_view body);

}  // namespace simdup::detail
