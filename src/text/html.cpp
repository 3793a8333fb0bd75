// HTML to text: a single forward pass over the bytes. Every search that can fail remembers its
// failure, so inputs such as "<a<a<a..." or unterminated quotes stay linear, not quadratic.
#include "text/html.hpp"

#include <simdup/utf8.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace simdup::detail {

namespace {

constexpr bool is_alpha(char c) noexcept {
  return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
constexpr bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
constexpr bool is_alnum(char c) noexcept {
  return is_alpha(c) || is_digit(c);
}
constexpr bool is_html_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
constexpr char to_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? char(c + 32) : c;
}

constexpr int digit_value(char c, bool hex) noexcept {
  if (is_digit(c)) return c - '0';
  if (hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

// Numeric references to U+0080..U+009F mean Windows-1252 characters (HTML's rule, because
// legacy pages wrote &#150; for a dash); 0 marks the five bytes 1252 leaves undefined.
constexpr char16_t windows_1252_c1[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

char32_t numeric_reference(std::uint32_t value) noexcept {
  if (value == 0 || !utf8::is_scalar_value(value)) return utf8::replacement_character;
  if (value >= 0x80 && value <= 0x9F && windows_1252_c1[value - 0x80] != 0) {
    return windows_1252_c1[value - 0x80];
  }
  return value;
}

// Phrasing elements that do not separate words: "<b>bo</b>ld" reads "bold". Every other tag,
// known or not, becomes a space, since gluing two words together loses more than splitting one.
constexpr std::string_view inline_tags[] = {
    "a",      "abbr",   "acronym", "b",   "bdi",  "bdo", "big",  "cite",  "code",
    "data",   "del",    "dfn",     "em",  "font", "i",   "ins",  "kbd",   "mark",
    "nobr",   "q",      "rp",      "rt",  "ruby", "s",   "samp", "small", "span",
    "strike", "strong", "sub",     "sup", "time", "tt",  "u",    "var",   "wbr"};

bool is_inline_tag(std::string_view name) noexcept {
  return std::binary_search(std::begin(inline_tags), std::end(inline_tags), name);
}

class html_parser {
 public:
  html_parser(std::string_view in, std::string& out) : in_(in), out_(out) {}

  void run() {
    const std::size_t n = in_.size();
    std::size_t i = 0;
    while (i < n) {
      std::size_t j = i;
      while (j < n && in_[j] != '<' && in_[j] != '&') ++j;
      out_.append(in_.data() + i, j - i);
      if (j == n) break;
      i = in_[j] == '&' ? reference(j) : markup(j);
    }
  }

 private:
  static constexpr std::size_t npos = std::string_view::npos;

  void append_code_point(char32_t cp) { utf8::append(out_, cp); }

  // `amp` is at '&'. Decodes a character reference, or keeps the '&' as text.
  std::size_t reference(std::size_t amp) {
    const std::size_t n = in_.size();
    std::size_t p = amp + 1;
    if (p < n && in_[p] == '#') {
      ++p;
      const bool hex = p < n && (in_[p] == 'x' || in_[p] == 'X');
      if (hex) ++p;
      const std::size_t digits = p;
      std::uint32_t value = 0;
      for (int d; p < n && (d = digit_value(in_[p], hex)) >= 0; ++p) {
        value = std::min<std::uint32_t>(value * (hex ? 16 : 10) + d, 0x110000);  // saturate
      }
      if (p > digits) {
        if (p < n && in_[p] == ';') ++p;
        append_code_point(numeric_reference(value));
        return p;
      }
    } else {
      // Longest HTML 4 name is 8 characters; 32 bounds the scan on long alphanumeric runs.
      while (p < n && p - amp <= 32 && is_alnum(in_[p])) ++p;
      if (p > amp + 1 && p < n && in_[p] == ';') {
        const char32_t cp = lookup_html_entity(in_.substr(amp + 1, p - amp - 1));
        if (cp != 0) {
          append_code_point(cp);
          return p + 1;
        }
      }
    }
    out_ += '&';
    return amp + 1;
  }

  // `lt` is at '<'. Consumes a tag, comment or declaration, or keeps the '<' as text.
  std::size_t markup(std::size_t lt) {
    const std::size_t n = in_.size();
    const std::size_t k = lt + 1;
    if (k >= n) return literal_lt(k);
    const char c = in_[k];
    if (c == '!') {
      if (in_.substr(k, 3) != "!--") return bogus_comment(k);  // <!DOCTYPE>, <![CDATA[...]]>
      const std::size_t body = k + 3;
      if (in_.substr(body, 1) == ">") return body + 1;   // "<!-->" closes at once
      if (in_.substr(body, 2) == "->") return body + 2;  // so does "<!--->"
      const std::size_t end = in_.find("-->", body);
      return end == npos ? n : end + 3;  // an unclosed comment runs to the end, as in browsers
    }
    if (c == '?') return bogus_comment(k);
    const bool closing = c == '/';
    const std::size_t name_start = closing ? k + 1 : k;
    if (closing) {
      if (name_start >= n) return literal_lt(k);
      if (in_[name_start] == '>') return name_start + 1;  // "</>" is ignored
      if (!is_alpha(in_[name_start])) return bogus_comment(k);
    } else if (!is_alpha(c)) {
      return literal_lt(k);  // "a < b", "<3"
    }
    if (no_gt_) return literal_lt(k);  // no '>' left: this cannot be a tag
    // HTML allows '<' inside a tag name; stopping there changes no name we act on and keeps
    // "<a<a<a..." from rescanning the input for every '<'.
    std::size_t p = name_start;
    while (p < n && !is_html_space(in_[p]) && in_[p] != '/' && in_[p] != '>' && in_[p] != '<') ++p;
    char lowered[16];
    std::string_view name;  // empty when too long to be a tag we know
    if (p - name_start <= sizeof lowered) {
      std::transform(in_.begin() + name_start, in_.begin() + p, lowered, to_lower);
      name = std::string_view(lowered, p - name_start);
    }
    const std::size_t end = tag_end(p);
    if (end == npos) return literal_lt(k);  // never closed: keep it as text
    if (!is_inline_tag(name)) out_ += ' ';
    if (!closing && (name == "script" || name == "style")) return skip_raw_text(end, name);
    return end;
  }

  std::size_t literal_lt(std::size_t after) {
    out_ += '<';
    return after;
  }

  // <!...>, <?...>, </3...>: dropped up to the next '>' (or to the end).
  std::size_t bogus_comment(std::size_t from) {
    const std::size_t gt = find_gt(from);
    return gt == npos ? in_.size() : gt + 1;
  }

  std::size_t find_gt(std::size_t from) {
    if (no_gt_) return npos;
    const std::size_t gt = in_.find('>', from);
    no_gt_ = gt == npos;
    return gt;
  }

  // Position after the '>' closing a tag whose attributes start at `p`, or npos. A quoted
  // attribute value may contain '>'. Once quote-aware scanning has failed (an unterminated
  // value, or quotes hiding every '>'), later tags end at the first '>', keeping the pass linear.
  std::size_t tag_end(std::size_t p) {
    const std::size_t n = in_.size();
    const std::size_t attributes = p;
    while (!quotes_unreliable_ && p < n) {
      const char ch = in_[p++];
      if (ch == '>') return p;
      if (ch != '=') continue;
      while (p < n && is_html_space(in_[p])) ++p;
      if (p < n && (in_[p] == '"' || in_[p] == '\'')) {
        const std::size_t close = in_.find(in_[p], p + 1);
        if (close == npos) break;
        p = close + 1;
      }
    }
    quotes_unreliable_ = true;
    const std::size_t gt = find_gt(attributes);
    return gt == npos ? npos : gt + 1;
  }

  // Drops a <script>/<style> body: everything up to the first "</name" followed by a space,
  // '/', '>' or the end, even inside a JavaScript string, as browsers do. Returns the position
  // of that end tag (parsed next like any tag), or the end of input.
  std::size_t skip_raw_text(std::size_t from, std::string_view name) {
    const std::size_t n = in_.size();
    for (std::size_t p = from; (p = in_.find("</", p)) != npos; p += 2) {
      const std::size_t after = p + 2 + name.size();
      if (after > n) break;
      const std::string_view candidate = in_.substr(p + 2, name.size());
      const bool same = std::equal(candidate.begin(), candidate.end(), name.begin(),
                                   [](char a, char b) { return to_lower(a) == b; });
      if (same &&
          (after == n || is_html_space(in_[after]) || in_[after] == '/' || in_[after] == '>')) {
        return p;
      }
    }
    return n;
  }

  std::string_view in_;
  std::string& out_;
  bool no_gt_ = false;              // no '>' after some earlier position
  bool quotes_unreliable_ = false;  // a quote-aware tag scan failed once
};

}  // namespace

void html_to_text(std::string_view html, std::string& out) {
  out.clear();
  out.reserve(html.size());
  html_parser(html, out).run();
}

}  // namespace simdup::detail
