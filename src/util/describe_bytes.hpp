// Byte counts in messages about memory limits.
#pragma once

#include <cstdint>
#include <string>

namespace simdup::detail {

/// Whole MiB when exact or when `round_up`, else the exact count (so a limit and the smallest
/// one that works never print the same).
inline std::string describe_bytes(uint64_t bytes, bool round_up) {
  constexpr uint64_t mib = uint64_t{1} << 20;
  if (bytes % mib == 0 || round_up) return std::to_string((bytes + mib - 1) / mib) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace simdup::detail
