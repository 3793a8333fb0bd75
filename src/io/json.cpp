#include <simdup/json.hpp>

#include <simdup/utf8.hpp>

#include <charconv>
#include <cmath>

namespace simdup::json {
namespace {

// Bytes that need attention: control characters, '"', '\\' and non-ASCII (UTF-8 checks).
constexpr bool needs_care(unsigned char c) {
  return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

}  // namespace

std::size_t append_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t replaced = 0;
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size() && !needs_care(static_cast<unsigned char>(s[j]))) ++j;
    out.append(s.data() + i, j - i);
    i = j;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const char* p = s.data() + i;
      const char* const start = p;
      std::size_t invalid = 0;
      utf8::decode(p, s.data() + s.size(), invalid);
      if (invalid == 0) {
        out.append(start, static_cast<std::size_t>(p - start));
      } else {
        out.append("\xEF\xBF\xBD");
        replaced += invalid;
      }
      i = static_cast<std::size_t>(p - s.data());
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(esc, 6);
      }
    }
    ++i;
  }
  out.push_back('"');
  return replaced;
}

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out.append("null");
    return;
  }
  if (value == std::trunc(value) && std::fabs(value) < 9.0e15) {
    append_int(out, static_cast<int64_t>(value));
    return;
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_int(std::string& out, int64_t value) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_uint(std::string& out, uint64_t value) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_id(std::string& out, std::string_view text, bool is_number) {
  if (is_number) {
    out.append(text);
  } else {
    append_string(out, text);
  }
}

void writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

writer& writer::begin_object() {
  separate();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

writer& writer::end_object() {
  out_.push_back('}');
  first_.pop_back();
  return *this;
}

writer& writer::begin_array() {
  separate();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

writer& writer::end_array() {
  out_.push_back(']');
  first_.pop_back();
  return *this;
}

writer& writer::key(std::string_view name) {
  separate();
  append_string(out_, name);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

writer& writer::value(std::string_view s) {
  separate();
  append_string(out_, s);
  return *this;
}

writer& writer::value(bool b) {
  separate();
  out_.append(b ? "true" : "false");
  return *this;
}

writer& writer::value(double d) {
  separate();
  append_number(out_, d);
  return *this;
}

writer& writer::value(int64_t v) {
  separate();
  append_int(out_, v);
  return *this;
}

writer& writer::value(uint64_t v) {
  separate();
  append_uint(out_, v);
  return *this;
}

writer& writer::null() {
  separate();
  out_.append("null");
  return *this;
}

writer& writer::raw(std::string_view json) {
  separate();
  out_.append(json);
  return *this;
}

writer& writer::id(std::string_view text, bool is_number) {
  separate();
  append_id(out_, text, is_number);
  return *this;
}

}  // namespace simdup::json
