// Durations as people write them in options and configs ("7d", "12h").
#pragma once

#include <simdup/error.hpp>

#include <cstdint>
#include <string_view>

namespace simdup {

/// "7d", "12h", "30m", "45s", "2w" or plain seconds ("3600") to seconds; "0" means none.
/// Anything else (a negative number, an unknown unit, an overflow) is errc::invalid_argument.
result<int64_t> parse_duration(std::string_view text);

}  // namespace simdup
