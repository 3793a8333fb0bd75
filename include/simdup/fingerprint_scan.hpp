// Fingerprints that can be read more than once, in order: what all_pairs reads in passes
// under a memory limit, and what a fingerprint list spilled to files offers.
#pragma once

#include <simdup/error.hpp>

#include <cstdint>
#include <functional>
#include <span>

namespace simdup {

/// `size` fingerprints (ordinals from 0). `read` hands consecutive blocks to `block` and
/// returns ok at the end of the input, or the input's error. Each call reads from the start.
struct fingerprint_scan {
  uint64_t size = 0;
  std::function<status(const std::function<void(std::span<const uint64_t>)>& block)> read;
};

}  // namespace simdup
