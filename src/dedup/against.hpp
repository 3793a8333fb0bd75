// Batch mode against earlier runs' indexes (dedup_options::against): which of this run's
// documents duplicate a document of an index. The indexes are read in place and streamed (the
// old text is never read): exact keys are looked up in this run's exact tables, fingerprints go
// through all_pairs with this run's (one input against the other, cross_split), MinHash band
// keys are joined with this run's sorted band keys, and every near candidate is verified
// against the index's stored shingles as within the run.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>

#include "dedup/engine_state.hpp"
#include "dedup/record_column.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// A document's match in an index; index 0 means none.
struct against_match {
  uint8_t index = 0;  ///< 1 + position in dedup_options::against
  dedup_layer layer = dedup_layer::none;
  int8_t distance = -1;
  float jaccard = std::numeric_limits<float>::quiet_NaN();
  uint32_t document = 0;  ///< in that index

  bool found() const noexcept { return index != 0; }
  /// The better of two matches: exact layers before near, then the closer, then the earlier
  /// index and document.
  bool better_than(const against_match& o) const noexcept;
};

/// The error for `against` outside batch mode (the job and the stream deduplicator refuse it).
error_info against_needs_batch();

struct against_counts {
  uint64_t candidates = 0;  ///< near pairs proposed (SimHash and MinHash)
  uint64_t rejected = 0;    ///< of them, rejected by verification
};

/// One match per document of the run (by ordinal; none where it matches nothing). `twin[i]`:
/// the document whose shingles stand for i (empty without verification); `band_keys`: the
/// run's MinHash keys by ordinal (in memory or spilled). errc::too_large when the run and the
/// indexes hold more than 2^32 - 1 fingerprints together; the shingle store's read errors.
result<std::vector<against_match>> match_against(
    const engine_state& state, std::span<const uint32_t> twin, const record_column& band_keys,
    against_counts& counts, const std::function<void(std::string_view)>& phase);

}  // namespace simdup::detail
