#include <simdup/duration.hpp>

#include <charconv>
#include <climits>
#include <string>

namespace simdup {

result<int64_t> parse_duration(std::string_view text) {
  int64_t unit = 1;
  std::string_view digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        unit = 0;
    }
    if (unit != 0)
      digits.remove_suffix(1);
    else
      unit = 1;
  }
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 0 ||
      n > INT64_MAX / unit) {
    return make_error(errc::invalid_argument,
                      "bad duration \"" + std::string(text) +
                          "\" (expected a number with an optional unit s, m, h, d or w)");
  }
  return n * unit;
}

}  // namespace simdup
