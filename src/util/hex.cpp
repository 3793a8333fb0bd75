#include <simdup/simhash.hpp>

namespace simdup {

std::string to_hex(uint64_t fingerprint) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) out[i] = digits[fingerprint & 0xf];
  return out;
}

result<uint64_t> parse_hex(std::string_view text) {
  if (text.size() != 16) {
    return make_error(errc::invalid_input, "fingerprint must be 16 hex digits, got " +
                                               std::to_string(text.size()) + " characters");
  }
  uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return make_error(errc::invalid_input, "fingerprint has a non-hex character");
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  return value;
}

}  // namespace simdup
