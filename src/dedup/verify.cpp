#include <simdup/verify.hpp>

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

namespace simdup {
namespace {

// Length of the UTF-8 sequence starting with `lead`; the text is valid UTF-8 after
// normalisation, but a stray byte still advances by one so the loop always ends.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

uint32_t hash32(std::string_view bytes) {
  return static_cast<uint32_t>(XXH3_64bits(bytes.data(), bytes.size()) >> 32);
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
  // starts[i % (width + 1)] holds the byte offset of the i-th code point; a shingle of `width`
  // code points ending before code point i starts at code point i - width.
  std::vector<std::size_t> starts(width + 1);
  std::size_t count = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    starts[count % (width + 1)] = pos;
    ++count;
    pos += sequence_length(static_cast<unsigned char>(text[pos]));
    pos = std::min(pos, text.size());
    if (count >= width) {
      const std::size_t begin = starts[(count - width) % (width + 1)];
      out.push_back(hash32(text.substr(begin, pos - begin)));
    }
  }
  if (count < width) out.push_back(hash32(text));
  std::sort(out.begin(), out.end());
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
