#include "features/python_simhash.hpp"

#include "features/accumulate.hpp"
#include "features/extract.hpp"
#include "features/hash.hpp"
#include "features/md5.hpp"

#include <simdup/utf8.hpp>

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace simdup::detail {
namespace {

utf8proc_category_t category(char32_t c) noexcept {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

// Python's str.isalnum() (categories L*, N*) or '_': the code points `\w` matches.
constexpr bool is_python_word(char32_t c) noexcept {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  if (c >= 0x4e00 && c <= 0x9fcc) return true;  // the pattern's explicit CJK range
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// Unicode Case_Ignorable: Mn, Me, Cf, Lm, Sk and the Word_Break MidLetter, MidNumLet and
// Single_Quote characters.
bool is_case_ignorable(char32_t c) noexcept {
  switch (c) {
    case 0x27:
    case 0x2e:
    case 0x3a:
    case 0xb7:
    case 0x387:
    case 0x55f:
    case 0x5f4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xfe13:
    case 0xfe52:
    case 0xfe55:
    case 0xff07:
    case 0xff0e:
    case 0xff1a:
      return true;
    default:
      break;
  }
  switch (category(c)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      return false;
  }
}

// Unicode Cased, approximated by utf8proc's data: a cased letter category or a case mapping
// (which covers the circled letters and Roman numerals of Other_Lowercase/Other_Uppercase).
bool is_cased(char32_t c) noexcept {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
      return true;
    default:
      break;
  }
  const auto ci = static_cast<utf8proc_int32_t>(c);
  return utf8proc_tolower(ci) != ci || utf8proc_toupper(ci) != ci;
}

// Python's handle_capital_sigma: U+03A3 lowers to final sigma when preceded by a cased letter
// and not followed by one, skipping case-ignorable code points on both sides.
bool is_final_sigma(const std::vector<char32_t>& cps, std::size_t i) noexcept {
  std::size_t j = i;
  while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
  if (j == 0 || !is_cased(cps[j - 1])) return false;
  std::size_t k = i + 1;
  while (k < cps.size() && is_case_ignorable(cps[k])) ++k;
  return k == cps.size() || !is_cased(cps[k]);
}

// Python's lowercase of `c` outside the U+03A3 rule, passed to emit().
template <class Emit>
[[gnu::always_inline]] inline void lower_one(char32_t c, Emit& emit) {
  if (c < 0x80) {
    emit(c >= 'A' && c <= 'Z' ? c + 32 : c);
  } else if (c >= 0x3000 && c <= 0x9fff) {
    emit(c);                // CJK punctuation, kana and ideographs: nothing here has a case mapping
  } else if (c == 0x130) {  // the one unconditional multi-code-point lowercase mapping
    emit(U'i');
    emit(char32_t{0x307});
  } else {
    emit(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
  }
}

// Decodes `text` and lowercases it the way Python does; calls emit(code point) for each
// code point of the result.
template <class Emit>
std::size_t lower_code_points(std::string_view text, Emit&& emit) {
  std::size_t invalid = 0;
  // Only U+03A3 (always encoded CE A3) needs context on both sides; text without it streams.
  if (text.find("\xCE\xA3") == std::string_view::npos) {
    for (std::size_t i = 0; i < text.size();) lower_one(utf8::decode(text, i, invalid), emit);
    return invalid;
  }
  thread_local std::vector<char32_t> cps;
  cps.clear();
  for (std::size_t i = 0; i < text.size();) cps.push_back(utf8::decode(text, i, invalid));
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == 0x3a3) {
      emit(is_final_sigma(cps, i) ? char32_t{0x3c2} : char32_t{0x3c3});
    } else {
      lower_one(cps[i], emit);
    }
  }
  return invalid;
}

uint64_t load_le64(const char* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// The first n bytes of a little-endian word.
uint64_t low_bytes(uint32_t n) noexcept {
  return n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
}

// A shingle of prepared text as an MD5 message (at most 16 bytes: four code points of valid
// UTF-8), loaded where 16 bytes follow its start and copied near the end.
md5_short_message message_of(std::string_view text, std::string_view shingle) noexcept {
  const char* first = shingle.data();
  const auto size = static_cast<uint32_t>(shingle.size());
  if (first + 16 <= text.data() + text.size()) {
    return {load_le64(first) & low_bytes(size),
            load_le64(first + 8) & low_bytes(size > 8 ? size - 8 : 0), size};
  }
  char buf[16] = {};  // near the end: copy what there is
  std::memcpy(buf, first, std::min<std::size_t>(size, sizeof(buf)));
  return {load_le64(buf), load_le64(buf + 8), size};
}

// Calls add(message) for each shingle of prepared text as python_simhash_shingles slides
// them.
template <class Add>
void for_each_shingle_message(std::string_view text, Add&& add) {
  if (text.empty()) {
    add(md5_short_message{0, 0, 0});  // the feature ''
    return;
  }
  for_each_shingle_run(
      text, 4, [&](std::string_view s) { add(message_of(text, s)); },
      [&](const char* first, std::size_t count) {
        for (std::size_t k = 0; k < count; ++k) {
          uint32_t four;
          std::memcpy(&four, first + k, sizeof(four));
          if constexpr (std::endian::native == std::endian::big) four = __builtin_bswap32(four);
          add(md5_short_message{four, 0, 4});
        }
      });
}

// Counts the distinct shingles of prepared text in an open-addressing table of the shingles
// themselves, sized once per text (so it never grows). Prepared text holds word characters
// only, never NUL, so no shingle of non-empty text is all zero bytes: that marks a free slot.
class distinct_shingles {
 public:
  std::size_t count(std::string_view prepared) {
    if (prepared.empty()) return 1;  // the feature ''
    // At most one distinct shingle per code point: the table is sized from the byte count.
    std::size_t bits = 6;
    while ((std::size_t{1} << bits) < 2 * prepared.size()) ++bits;
    const std::size_t size = std::size_t{1} << bits;
    // A table grown for one huge text is given back rather than kept for every later one.
    if (slots_.capacity() > kKeepSlots && size * 8 < slots_.capacity()) slots_ = {};
    slots_.assign(size, key{});
    const std::size_t mask = size - 1;
    const int shift = 64 - static_cast<int>(bits);
    std::size_t distinct = 0;
    for_each_shingle_message(prepared, [&](const md5_short_message& m) {
      // A multiplicative hash; its top bits pick the slot.
      std::size_t i = (m.lo * 0x9e3779b97f4a7c15ULL + m.hi * 0xc2b2ae3d27d4eb4fULL) >> shift;
      while ((slots_[i].lo | slots_[i].hi) != 0) {
        if (((slots_[i].lo ^ m.lo) | (slots_[i].hi ^ m.hi)) == 0) return;
        i = (i + 1) & mask;
      }
      slots_[i] = {m.lo, m.hi};
      ++distinct;
    });
    return distinct;
  }

 private:
  struct key {
    uint64_t lo = 0;
    uint64_t hi = 0;
  };
  static constexpr std::size_t kKeepSlots = std::size_t{1} << 14;  // 256 KiB of slots

  std::vector<key> slots_;
};

// Appends UTF-8 to a string through a raw pointer, sizing the string in chunks, and gives
// back what it did not use when destroyed. utf8::append stages each code point in a buffer
// that std::string::append then reloads with wider loads than the byte stores that filled it:
// a store-forwarding stall per non-ASCII code point, a quarter of python_simhash_prepare's
// time on Chinese text.
class utf8_sink {
 public:
  /// Appends to `out`, expecting about `expected` bytes.
  utf8_sink(std::string& out, std::size_t expected) : out_(out), pos_(nullptr), end_(nullptr) {
    resize(out.size(), out.size() + expected + 16);
  }
  utf8_sink(const utf8_sink&) = delete;
  utf8_sink& operator=(const utf8_sink&) = delete;
  ~utf8_sink() { out_.resize(static_cast<std::size_t>(pos_ - out_.data())); }

  void put(char32_t c) {
    if (end_ - pos_ < 4) [[unlikely]] {
      resize(static_cast<std::size_t>(pos_ - out_.data()), 2 * out_.size());
    }
    pos_ += utf8::encode(c, pos_);
  }

  /// Appends table[u] for each code unit u of ASCII `units` (UTF-8 bytes or UCS-2), skipping
  /// zeros, without a branch per unit (whether one is kept is as unpredictable as where words
  /// end).
  template <class Unit>
  void put_mapped(std::basic_string_view<Unit> units, const std::array<char, 128>& table) {
    if (static_cast<std::size_t>(end_ - pos_) < units.size()) {
      const std::size_t used = static_cast<std::size_t>(pos_ - out_.data());
      resize(used, std::max(2 * out_.size(), used + units.size() + 16));
    }
    for (const Unit u : units) {
      const char m = table[static_cast<std::make_unsigned_t<Unit>>(u)];
      *pos_ = m;
      pos_ += m != 0 ? 1 : 0;
    }
  }

 private:
  void resize(std::size_t used, std::size_t size) {
    out_.resize(size);
    pos_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  std::string& out_;
  char* pos_;
  char* end_;
};

// An ASCII code point lowered if it is a word character, else 0.
constexpr std::array<char, 128> kAsciiWord = [] {
  std::array<char, 128> t{};
  for (int c = 0; c < 128; ++c) {
    const auto lowered = static_cast<char32_t>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    t[static_cast<std::size_t>(c)] = is_python_word(lowered) ? static_cast<char>(lowered) : 0;
  }
  return t;
}();

}  // namespace

std::size_t python_lower(std::string_view text, std::string& out) {
  utf8_sink sink(out, text.size());
  return lower_code_points(text, [&](char32_t c) { sink.put(c); });
}

std::size_t python_simhash_prepare(std::string_view text, std::string& out) {
  utf8_sink sink(out, text.size());
  const auto keep = [&](char32_t c) {
    if (is_python_word(c)) sink.put(c);
  };
  if (text.find("\xCE\xA3") != std::string_view::npos) return lower_code_points(text, keep);
  // Without U+03A3 every code point lowers on its own: ASCII runs go through a table.
  std::size_t invalid = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i;
    while (end < text.size() && static_cast<unsigned char>(text[end]) < 0x80) ++end;
    sink.put_mapped(text.substr(i, end - i), kAsciiWord);
    i = end;
    if (i < text.size()) lower_one(utf8::decode(text, i, invalid), keep);
  }
  return invalid;
}

void python_simhash_prepare_ucs2(std::u16string_view text, std::string& out) {
  if (text.find(u'\u03a3') != std::u16string_view::npos) {
    // Final sigma needs context on both sides: the UTF-8 path has it.
    std::string utf8;
    utf8.reserve(3 * text.size());
    for (const char16_t c : text) utf8::append(utf8, c);
    python_simhash_prepare(utf8, out);
    return;
  }
  utf8_sink sink(out, text.size());
  const auto keep = [&](char32_t c) {
    if (is_python_word(c)) sink.put(c);
  };
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i;
    while (end < text.size() && text[end] < 0x80) ++end;
    sink.put_mapped(text.substr(i, end - i), kAsciiWord);
    i = end;
    if (i < text.size()) lower_one(text[i++], keep);
  }
}

void python_simhash_shingles(std::string_view prepared, count_map& counts) {
  if (prepared.empty()) {
    counts.add(prepared);  // range(max(0 - 3, 1)) slides once: the feature ''
    return;
  }
  for_each_shingle(prepared, 4, [&](std::string_view s) { counts.add(s); });
}

uint64_t python_simhash_vote(std::string_view prepared) {
  // A shingle seen n times casts n votes, exactly the package's vote weighted by counts, so
  // the value needs no counting: every occurrence is hashed, a block at a time on the stack.
  constexpr std::size_t kBlock = 4 * md5_short_lanes;
  md5_short_message messages[kBlock];
  uint64_t hashes[kBlock];
  unit_votes votes;
  std::size_t k = 0;
  const auto flush = [&] {
    md5_64_short_many({messages, k}, {hashes, k});
    votes.add({hashes, k});
    k = 0;
  };
  for_each_shingle_message(prepared, [&](const md5_short_message& m) {
    messages[k++] = m;
    if (k == kBlock) flush();
  });
  if (k > 0) flush();
  return votes.fingerprint();
}

python_simhash_counted python_simhash_fingerprint(std::string_view prepared) {
  thread_local distinct_shingles table;
  return {python_simhash_vote(prepared), static_cast<uint32_t>(table.count(prepared))};
}

uint64_t python_simhash_weighted(std::span<const weighted_feature> features) {
  thread_local std::vector<std::string_view> texts;
  thread_local std::vector<uint64_t> hashes;
  texts.clear();
  for (const auto& f : features) texts.push_back(f.text);
  hashes.resize(texts.size());
  md5_64_many(texts, hashes);
  // Summed in feature order, as Python does: floating-point addition is not associative.
  std::array<double, 64> sums{};
  double total = 0;
  for (std::size_t k = 0; k < features.size(); ++k) {
    const double w = features[k].weight;
    total += w;
    if (w <= 0 && std::trunc(w) == w) continue;  // digest * w == b'' in Python
    const uint64_t h = hashes[k];
    for (int i = 0; i < 64; ++i) sums[i] += ((h >> i) & 1) ? w : 0.0;
  }
  uint64_t fp = 0;
  for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(sums[i] > total / 2) << i;
  return fp;
}

}  // namespace simdup::detail
