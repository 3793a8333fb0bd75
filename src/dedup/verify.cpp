#include <simdup/verify.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

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

// Sorting dominated --verify. The histogram of the hashes' top bits is taken while they are
// generated (about one bucket per shingle, as the bucket count follows the text length); then
// one pass puts each hash into its bucket with an insertion sort among the bucket's few earlier
// hashes, and one pass drops repeats: two passes instead of the six of an LSD radix sort.
struct sort_scratch {
  std::vector<uint32_t> raw;
  std::vector<uint32_t> count;
  std::vector<uint32_t> ring;
};

sort_scratch& scratch() {
  thread_local sort_scratch s;
  return s;
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
  sort_scratch& s = scratch();
  // The last `width` code points, in a ring whose size is a power of two (no division).
  const std::size_t ring_mask = std::bit_ceil(width) - 1;
  s.ring.assign(ring_mask + 1, 0);
  // At most one shingle per byte; the bucket count is the next power of two of that bound.
  if (s.raw.size() < text.size() + 1) s.raw.resize(text.size() + 1);
  const int bits = std::clamp(static_cast<int>(std::bit_width(text.size())), 4, 16);
  const int shift = 32 - bits;
  s.count.assign(std::size_t{1} << bits, 0);
  uint32_t* raw = s.raw.data();
  uint32_t* count = s.count.data();
  uint32_t* ring = s.ring.data();
  std::size_t n = 0;
  uint64_t h = 0;
  std::size_t seen = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    uint32_t cp = *p;
    if (cp < 0x80) {
      ++p;
    } else {
      cp = decode(p, end);
    }
    if (seen >= width) h -= drop * ring[(seen - width) & ring_mask];
    h = h * base + cp;
    ring[seen & ring_mask] = cp;
    ++seen;
    if (seen >= width) {
      const auto v = static_cast<uint32_t>(mix(h) >> 32);
      raw[n++] = v;
      ++count[v >> shift];
    }
  }
  if (seen < width) {
    const auto v = static_cast<uint32_t>(mix(h) >> 32);
    raw[n++] = v;
    ++count[v >> shift];
  }
  uint32_t sum = 0;
  for (uint32_t& c : s.count) sum += std::exchange(c, sum);
  // Scatter by bucket and insertion-sort inside the bucket at once: slots not yet filled hold
  // 0, and filled slots of earlier buckets are smaller, so the shifting stops at the bucket's
  // start without knowing it.
  out.assign(n + 1, 0);
  uint32_t* sorted = out.data() + 1;  // sorted[-1] == 0 stops the shifting at the front
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t v = raw[i];
    uint32_t* slot = sorted + count[v >> shift]++;
    for (; slot[-1] > v; --slot) *slot = slot[-1];
    *slot = v;
  }
  // Branch-free unique, moving the array one slot to the front (English text repeats many
  // shingles, at random places in the order). Writes never overtake reads.
  std::size_t kept = 0;
  uint32_t previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t v = sorted[i];
    out[kept] = v;
    kept += i == 0 || v != previous ? 1 : 0;
    previous = v;
  }
  out.resize(kept);
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

double jaccard_at_least(std::span<const uint32_t> a, std::span<const uint32_t> b,
                        double threshold) noexcept {
  const std::size_t total = a.size() + b.size();
  if (total == 0) return 0.0;
  // J = both / (total - both) >= t  <=>  both >= t * total / (1 + t); the margin keeps a pair
  // exactly at the threshold (4 of 5 at 0.8) from being cut by rounding.
  const double need = threshold * static_cast<double>(total) / (1.0 + threshold) - 1e-6;
  const auto bound = [&](std::size_t most_shared) {  // J if most_shared were all shared
    return static_cast<double>(most_shared) / static_cast<double>(total - most_shared);
  };
  if (static_cast<double>(std::min(a.size(), b.size())) < need) {
    return bound(std::min(a.size(), b.size()));
  }
  // Branch-free merge (the order of two random hashes is a coin flip for a branch predictor),
  // checked every 256 steps against the most that could still be shared.
  std::size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    const std::size_t steps = std::min({a.size() - i, b.size() - j, std::size_t{256}});
    for (std::size_t s = 0; s < steps && i < a.size() && j < b.size(); ++s) {
      const uint32_t x = a[i], y = b[j];
      both += x == y ? 1 : 0;
      i += x <= y ? 1 : 0;
      j += y <= x ? 1 : 0;
    }
    const std::size_t most = both + std::min(a.size() - i, b.size() - j);
    if (static_cast<double>(most) < need) return bound(most);
  }
  return bound(both);
}

namespace {

std::string system_reason(int err) {
  return std::generic_category().message(err);
}

// Decodes the varint-coded deltas of one array. Deltas take 3 or 4 bytes about as often as not,
// so a byte loop mispredicts its exit; while 8 bytes can be loaded, each varint is decoded
// without branches: its length from the first byte without the continuation bit, its value
// by gathering the 7-bit groups with shifts and masking to that length.
bool decode_array(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>& out) {
  out.resize(static_cast<std::size_t>(end - p));  // at most one value per byte
  uint32_t* w = out.data();
  uint32_t value = 0;
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
    const uint64_t stops = ~word & 0x8080808080808080ull;
    const int length = (std::countr_zero(stops) >> 3) + 1;  // stops == 0: 9, caught below
    if (length > 5) return false;
    uint64_t delta = (word & 0x7F) | ((word >> 1) & 0x3F80) | ((word >> 2) & 0x1FC000) |
                     ((word >> 3) & 0xFE00000) | ((word >> 4) & 0x7F0000000ull);
    delta &= (uint64_t{1} << (7 * length)) - 1;
    value += static_cast<uint32_t>(delta);
    *w++ = value;
    p += length;
  }
  while (p < end) {
    uint32_t delta = 0;
    for (int shift = 0;; shift += 7) {
      if (p == end || shift > 28) return false;
      const uint8_t byte = *p++;
      delta |= static_cast<uint32_t>(byte & 0x7F) << shift;
      if (byte < 0x80) break;
    }
    value += delta;
    *w++ = value;
  }
  out.resize(static_cast<std::size_t>(w - out.data()));
  return true;
}

}  // namespace

result<shingle_store> shingle_store::create(const std::string& dir, std::size_t buffer_bytes) {
  std::string where = dir;
  if (where.empty()) {
    std::error_code ec;
    where = std::filesystem::temp_directory_path(ec).string();
    if (ec) where = "/tmp";
  }
  std::string name = where + "/simdup-shingles-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return make_error(errc::io_error, "cannot create the temporary file of --verify in " + where +
                                          ": " + system_reason(errno) + " (set --tmp-dir)");
  }
  // Unlinked at once: the data lives until the descriptor is closed, and nothing is left
  // behind whatever way the run ends.
  ::unlink(name.c_str());
  return shingle_store(fd, std::move(where), std::max<std::size_t>(buffer_bytes, 1));
}

shingle_store::shingle_store(int fd, std::string dir, std::size_t buffer_bytes)
    : fd_(fd), dir_(std::move(dir)), buffer_bytes_(buffer_bytes) {
  buffer_.reserve(buffer_bytes_);
}

shingle_store::shingle_store(shingle_store&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      dir_(std::move(other.dir_)),
      buffer_bytes_(other.buffer_bytes_),
      offsets_(std::move(other.offsets_)),
      buffer_(std::move(other.buffer_)),
      flushed_(other.flushed_),
      failure_(std::move(other.failure_)) {
  other.offsets_.assign(1, 0);
}

shingle_store& shingle_store::operator=(shingle_store&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    dir_ = std::move(other.dir_);
    buffer_bytes_ = other.buffer_bytes_;
    offsets_ = std::move(other.offsets_);
    other.offsets_.assign(1, 0);
    buffer_ = std::move(other.buffer_);
    flushed_ = other.flushed_;
    failure_ = std::move(other.failure_);
  }
  return *this;
}

shingle_store::~shingle_store() {
  if (fd_ >= 0) ::close(fd_);
}

status shingle_store::put(uint32_t ordinal, std::span<const uint32_t> hashes) {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  while (offsets_.size() < static_cast<std::size_t>(ordinal) + 1)
    offsets_.push_back(offsets_.back());
  // Deltas of sorted hashes: English arrays of ~2,000 hashes have gaps of ~2^21, 3 bytes each.
  const std::size_t old = buffer_.size();
  buffer_.resize(old + hashes.size() * 5);
  uint8_t* w = buffer_.data() + old;
  uint32_t previous = 0;
  for (const uint32_t h : hashes) {
    uint32_t delta = h - previous;
    previous = h;
    while (delta >= 0x80) {
      *w++ = static_cast<uint8_t>(delta | 0x80);
      delta >>= 7;
    }
    *w++ = static_cast<uint8_t>(delta);
  }
  const auto written = static_cast<std::size_t>(w - buffer_.data());
  buffer_.resize(written);
  offsets_.push_back(offsets_.back() + (written - old));
  if (buffer_.size() >= buffer_bytes_) return write_buffer();
  return {};
}

status shingle_store::write_buffer() {
  const uint8_t* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // write() returns 0 only for a zero-byte request; treat it as no space left.
      failure_ = "cannot write the temporary file of --verify in " + dir_ + ": " +
                 system_reason(n < 0 ? errno : ENOSPC) + " (free space or set --tmp-dir)";
      return make_error(errc::io_error, failure_);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  flushed_ += buffer_.size();
  buffer_.clear();
  return {};
}

status shingle_store::flush() {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  return buffer_.empty() ? status{} : write_buffer();
}

status shingle_store::get(uint32_t ordinal, std::vector<uint32_t>& out) const {
  if (static_cast<std::size_t>(ordinal) + 1 >= offsets_.size()) {
    out.clear();
    return {};
  }
  const uint64_t begin = offsets_[ordinal];
  const uint64_t end = offsets_[ordinal + 1];
  const uint8_t* data = nullptr;
  thread_local std::vector<uint8_t> bytes;
  if (begin >= flushed_) {
    data = buffer_.data() + (begin - flushed_);
  } else {
    bytes.resize(end - begin);
    // Arrays are written whole or not at all, so begin < flushed_ means end <= flushed_.
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(begin + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return make_error(errc::io_error, "cannot read back the temporary file of --verify in " +
                                              dir_ + ": " +
                                              (n < 0 ? system_reason(errno) : "file truncated"));
      }
      done += static_cast<std::size_t>(n);
    }
    data = bytes.data();
  }
  if (!decode_array(data, data + (end - begin), out)) {
    return make_error(errc::corrupt_data, "the temporary file of --verify in " + dir_ +
                                              " is corrupt (a varint runs past its array)");
  }
  return {};
}
}  // namespace simdup
