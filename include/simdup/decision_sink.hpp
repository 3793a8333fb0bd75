// Where the dedup job's decisions go apart from its output directory: the interface a database
// sink implements (PostgreSQL in postgres_sink.hpp, docs/databases.md).
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>

#include <cstdint>
#include <string_view>

namespace simdup {

/// Receives every document's decision, in input order, once. Used by the dedup job next to
/// (or instead of) its output directory.
class decision_sink {
 public:
  virtual ~decision_sink() = default;
  /// The decision for document `ordinal` (0-based input position) with id `id`;
  /// `representative_id` is the id of the kept document it duplicates (its own id if kept).
  virtual status write(uint32_t ordinal, std::string_view id, const dedup_decision& decision,
                       std::string_view representative_id) = 0;
  /// Every decision was written: flush and make everything durable.
  virtual status finish() = 0;
};

}  // namespace simdup
