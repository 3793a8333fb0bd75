// The oracle of batch all-pairs for its tests (tests/unit/index) and benchmark
// (bench/e2e/index_pairs.cpp): internal to the index component, not part of the public API.
#pragma once

#include <simdup/all_pairs.hpp>

namespace simdup {

/// The plain baseline of all_pairs' method: single-threaded, per table std::sort of
/// (key, ordinal) and a scan. Same results as all_pairs (defined in all_pairs.cpp).
result<all_pairs_stats> all_pairs_baseline(std::span<const uint64_t> fingerprints,
                                           const all_pairs_options& options, const pair_sink& sink);

}  // namespace simdup
