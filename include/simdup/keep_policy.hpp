// Which document of a duplicate cluster is kept (its representative).
#pragma once

#include <simdup/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace simdup {

enum class keep_rule {
  first,    ///< the earliest in input order (default)
  longest,  ///< the longest text in bytes; ties: earliest
  newest,   ///< the latest time; records without a time are oldest; ties: earliest
  field,    ///< the largest number in a JSON field; missing or non-numeric is lowest; ties:
            ///< earliest
};

struct keep_policy {
  keep_rule rule = keep_rule::first;
  /// Field name for keep_rule::field.
  std::string field;
};

/// Parses "first", "longest", "newest" or "field:NAME" (NAME non-empty).
result<keep_policy> parse_keep_policy(std::string_view spec);

/// The policy's view of one document, small enough to keep for every document.
struct keep_rank {
  uint32_t ordinal = 0;
  uint32_t length = 0;
  int64_t time = 0;
  double field = 0;
};

/// True when `a` should be kept rather than `b` under `rule` (a strict order: ties fall back
/// to the earlier ordinal).
bool keep_before(keep_rule rule, const keep_rank& a, const keep_rank& b) noexcept;

}  // namespace simdup
