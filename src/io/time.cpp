// ISO-8601 date-times to unix seconds (JSONL/CSV `time` fields, WARC-Date).
#include <simdup/reader.hpp>

#include <string>

namespace simdup {
namespace {

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/// Reads exactly `n` digits at `pos`.
bool digits(std::string_view s, std::size_t& pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

}  // namespace

result<int64_t> parse_iso8601(std::string_view text) {
  const auto bad = [&] {
    return make_error(errc::invalid_input,
                      "not an ISO-8601 date-time: '" + std::string(text.substr(0, 64)) + "'");
  };
  std::size_t p = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(text, p, 4, year) || p >= text.size() || text[p++] != '-' ||
      !digits(text, p, 2, month) || p >= text.size() || text[p++] != '-' ||
      !digits(text, p, 2, day)) {
    return bad();
  }
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 ||
      day > kMonthDays[month - 1] + (month == 2 && leap(year) ? 1 : 0)) {
    return bad();
  }
  int offset_seconds = 0;
  if (p < text.size()) {
    if (text[p] != 'T' && text[p] != 't' && text[p] != ' ') return bad();
    ++p;
    if (!digits(text, p, 2, hour) || p >= text.size() || text[p++] != ':' ||
        !digits(text, p, 2, minute)) {
      return bad();
    }
    if (p < text.size() && text[p] == ':') {
      ++p;
      if (!digits(text, p, 2, second)) return bad();
      if (p < text.size() && (text[p] == '.' || text[p] == ',')) {
        ++p;
        const std::size_t start = p;
        while (p < text.size() && text[p] >= '0' && text[p] <= '9') ++p;
        if (p == start) return bad();
      }
    }
    // 60 allows a leap second; it lands on the next minute's first second.
    if (hour > 23 || minute > 59 || second > 60) return bad();
    if (p < text.size()) {
      const char z = text[p];
      if (z == 'Z' || z == 'z') {
        ++p;
      } else if (z == '+' || z == '-') {
        ++p;
        int oh = 0, om = 0;
        if (!digits(text, p, 2, oh)) return bad();
        if (p < text.size() && text[p] == ':') ++p;
        if (!digits(text, p, 2, om) || oh > 23 || om > 59) return bad();
        offset_seconds = (oh * 3600 + om * 60) * (z == '+' ? 1 : -1);
      }
    }
    if (p != text.size()) return bad();
  }
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         hour * 3600 + minute * 60 + second - offset_seconds;
}

}  // namespace simdup
