// A small JSON writer for answers: string escaping and number formatting appended to a buffer.
// (Switch to simdup/json.hpp once the io component provides it.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simdup::detail {

/// Appends `s` as a quoted JSON string. `s` must be valid UTF-8 (it comes from parsed JSON);
/// control characters are escaped.
inline void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

inline std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace simdup::detail
