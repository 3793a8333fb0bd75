#include <simdup/verify.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string>
#include <utility>

namespace simdup {
namespace {

// Decodes one code point of (normalised, valid) UTF-8 and advances; a stray byte is taken as
// itself so the loop always ends.
uint32_t decode(const unsigned char*& p, const unsigned char* end) {
  const uint32_t lead = *p++;
  int extra = lead < 0xC0 ? 0 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : 3;
  uint32_t cp = extra == 0 ? lead : lead & (0x3Fu >> extra);
  for (; extra > 0 && p < end && (*p & 0xC0) == 0x80; --extra) cp = (cp << 6) | (*p++ & 0x3F);
  return cp;
}

// MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit over the output.
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

// LSD radix sort, 3 passes of 11 bits: several times faster than std::sort on the thousands of
// hashes of a typical document (sorting dominated the cost of --verify).
void radix_sort(std::vector<uint32_t>& v) {
  if (v.size() < 512) {
    std::sort(v.begin(), v.end());
    return;
  }
  thread_local std::vector<uint32_t> tmp;
  tmp.resize(v.size());
  std::array<uint32_t, 2048> count;
  for (int shift = 0; shift < 33; shift += 11) {
    count.fill(0);
    for (uint32_t x : v) ++count[(x >> shift) & 2047];
    uint32_t sum = 0;
    for (uint32_t& c : count) sum += std::exchange(c, sum);
    for (uint32_t x : v) tmp[count[(x >> shift) & 2047]++] = x;
    v.swap(tmp);
  }
}

std::vector<uint32_t>& thread_window() {
  thread_local std::vector<uint32_t> window;
  return window;
}

}  // namespace

result<verify_options> parse_verify_spec(std::string_view spec) {
  constexpr std::string_view prefix = "jaccard:";
  const auto bad = [&] {
    return make_error(
        errc::invalid_argument,
        "--verify: expected jaccard:T with T in (0, 1], got '" + std::string(spec) + "'");
  };
  if (!spec.starts_with(prefix)) return bad();
  const std::string number(spec.substr(prefix.size()));
  double threshold = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), threshold);
  if (ec != std::errc{} || end != number.data() + number.size() || !(threshold > 0) ||
      threshold > 1) {
    return bad();
  }
  verify_options options;
  options.threshold = threshold;
  return options;
}

void shingle_hashes(std::string_view text, std::size_t width, std::size_t max_hashes,
                    std::vector<uint32_t>& out) {
  out.clear();
  if (text.empty() || width == 0) return;
  // A polynomial rolling hash over code points (mod 2^64), finalised by a bijective mixer:
  // one multiply-add per code point instead of hashing every shingle's bytes again.
  constexpr uint64_t base = 0x100000001B3ull;
  uint64_t drop = 1;  // base^(width-1): weight of the code point leaving the window
  for (std::size_t i = 1; i < width; ++i) drop *= base;
  std::vector<uint32_t>& window = thread_window();
  window.assign(width, 0);
  uint64_t h = 0;
  std::size_t count = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const uint32_t cp = decode(p, end);
    if (count >= width) h -= drop * window[count % width];
    h = h * base + cp;
    window[count % width] = cp;
    ++count;
    if (count >= width) out.push_back(static_cast<uint32_t>(mix(h) >> 32));
  }
  if (count < width) out.push_back(static_cast<uint32_t>(mix(h) >> 32));
  radix_sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (max_hashes != 0 && out.size() > max_hashes) out.resize(max_hashes);
}

double sketch_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b,
                      std::size_t max_hashes) noexcept {
  // A cut array knows membership only up to its largest hash; above that bound nothing can be
  // compared, so the walk stops there (and after max_hashes union elements, the bottom-k rule).
  uint64_t bound = std::numeric_limits<uint64_t>::max();
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  if (max_hashes != 0) {
    limit = max_hashes;
    if (a.size() >= max_hashes && !a.empty()) bound = std::min<uint64_t>(bound, a.back());
    if (b.size() >= max_hashes && !b.empty()) bound = std::min<uint64_t>(bound, b.back());
  }
  std::size_t i = 0, j = 0, both = 0, total = 0;
  while (total < limit && (i < a.size() || j < b.size())) {
    uint32_t next;
    bool in_both = false;
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      next = a[i++];
    } else if (i == a.size() || b[j] < a[i]) {
      next = b[j++];
    } else {
      next = a[i];
      ++i, ++j;
      in_both = true;
    }
    if (next > bound) break;
    ++total;
    both += in_both ? 1 : 0;
  }
  return total == 0 ? 0.0 : static_cast<double>(both) / static_cast<double>(total);
}

void shingle_store::put(uint32_t ordinal, std::span<const uint32_t> hashes) {
  while (offsets_.size() < static_cast<std::size_t>(ordinal) + 1)
    offsets_.push_back(hashes_.size());
  hashes_.insert(hashes_.end(), hashes.begin(), hashes.end());
  offsets_.push_back(hashes_.size());
}

std::span<const uint32_t> shingle_store::get(uint32_t ordinal) const noexcept {
  if (static_cast<std::size_t>(ordinal) + 1 >= offsets_.size()) return {};
  return {hashes_.data() + offsets_[ordinal], hashes_.data() + offsets_[ordinal + 1]};
}

}  // namespace simdup
