// shingle_store: the --verify shingle arrays of a run in an unlinked temporary file, 8 bytes of
// memory per document. The array format is described at encoded_bytes().
#include <simdup/verify.hpp>

#include "util/temp_file.hpp"
#include "util/write_errc.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace simdup {
namespace {

std::string system_reason(int err) {
  return std::generic_category().message(err);
}

// The array format. Hashes are sorted and spread evenly over 32 bits, so their top 8 bits say
// little that the position in the array does not: each array stores the low 24 bits of every
// hash as 3 fixed bytes, then the top 8 bits in unary, Elias-Fano style: hash i sets bit
// i + (hash >> 24) of a bitmap of n + 256 bits. An English article's 2,000 hashes take 3.13
// bytes each (varint deltas: 3.4), and decoding has no chain from one value to the next (a
// varint's position depends on the lengths of all before it). The length in bytes determines
// n, so the store keeps no count: 8 * length is 25n + 256 .. 25n + 263.
constexpr std::size_t kBuckets = 256;

std::size_t encoded_bytes(std::size_t n) {
  return n == 0 ? 0 : 3 * n + (n + kBuckets + 7) / 8;
}

// The n whose encoding takes `bytes`, or SIZE_MAX when none does (a corrupt offset).
std::size_t count_of_bytes(uint64_t bytes) {
  if (bytes == 0) return 0;
  if (bytes * 8 < 25 + kBuckets) return SIZE_MAX;
  const auto n = static_cast<std::size_t>((bytes * 8 - kBuckets) / 25);
  return encoded_bytes(n) == bytes ? n : SIZE_MAX;
}

// Writes the encoding of sorted distinct `hashes` to `w` (encoded_bytes(n) bytes, plus one byte
// of slack that the 4-byte stores may touch and the bitmap then overwrites).
void encode_array(std::span<const uint32_t> hashes, uint8_t* w) {
  const std::size_t n = hashes.size();
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t low = hashes[i] & 0xFFFFFFu;
    std::memcpy(w + 3 * i, &low, 4);  // little-endian byte order, stored byte by byte below
    if constexpr (std::endian::native == std::endian::big) {
      w[3 * i] = static_cast<uint8_t>(low);
      w[3 * i + 1] = static_cast<uint8_t>(low >> 8);
      w[3 * i + 2] = static_cast<uint8_t>(low >> 16);
    }
  }
  uint8_t* bits = w + 3 * n;
  std::memset(bits, 0, (n + kBuckets + 7) / 8);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t bit = i + (hashes[i] >> 24);
    bits[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
  }
}

// Decodes `bytes` bytes at p (an array of n hashes, n from count_of_bytes) into out. False when
// the bitmap does not hold exactly n values (a corrupt file). Reads only inside [p, p + bytes):
// the 4-byte load of the last low part ends on the bitmap's first byte.
bool decode_array(const uint8_t* p, std::size_t bytes, std::size_t n, std::vector<uint32_t>& out) {
  out.resize(n);
  if (n == 0) return true;
  uint32_t* w = out.data();
  const uint8_t* bits = p + 3 * n;
  const std::size_t bitmap_bytes = bytes - 3 * n;
  std::size_t i = 0;
  for (std::size_t at = 0; at < bitmap_bytes; at += 8) {
    uint64_t word = 0;
    const std::size_t take = std::min<std::size_t>(8, bitmap_bytes - at);
    std::memcpy(&word, bits + at, take);
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
    const std::size_t base = at * 8;
    if (static_cast<std::size_t>(std::popcount(word)) > n - i) return false;
    while (word != 0) {
      const std::size_t bit = base + static_cast<std::size_t>(std::countr_zero(word));
      word &= word - 1;
      uint32_t low;
      std::memcpy(&low, p + 3 * i, 4);
      if constexpr (std::endian::native == std::endian::big) low = __builtin_bswap32(low);
      w[i] = static_cast<uint32_t>((bit - i) << 24) | (low & 0xFFFFFFu);
      ++i;
    }
  }
  return i == n;
}

error_info corrupt_error(const std::string& dir) {
  return make_error(errc::corrupt_data, "the temporary file of --verify in " + dir +
                                            " is corrupt (an array does not decode)");
}

}  // namespace

result<shingle_store> shingle_store::create(const std::string& dir, std::size_t buffer_bytes) {
  std::string where;
  const int fd = detail::open_unlinked_temp(dir, "simdup-shingles", where);
  if (fd < 0) {
    return make_error(errc::io_error, "cannot create the temporary file of --verify in " + where +
                                          ": " + system_reason(errno) + " (set --tmp-dir)");
  }
  return shingle_store(fd, std::move(where), std::max<std::size_t>(buffer_bytes, 1));
}

result<shingle_store> shingle_store::create_file(const std::string& path,
                                                 std::size_t buffer_bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(errc::io_error,
                      "cannot create the verification file " + path + ": " + system_reason(errno));
  }
  return shingle_store(fd, path, std::max<std::size_t>(buffer_bytes, 1));
}

result<shingle_store> shingle_store::reopen_file(const std::string& path,
                                                 std::size_t buffer_bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return make_error(errno == ENOENT ? errc::not_found : errc::io_error,
                      "cannot open the verification file " + path + ": " + system_reason(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(errc::io_error, "cannot read " + path + ": " + system_reason(err));
  }
  shingle_store store(fd, path, std::max<std::size_t>(buffer_bytes, 1));
  // Until end_adopting(), every byte of the file is readable and nothing is buffered.
  store.flushed_ = static_cast<uint64_t>(st.st_size);
  store.adopting_ = true;
  return store;
}

void shingle_store::skip_to(uint32_t ordinal) {
  // Ordinals skipped since the last array have empty arrays.
  offsets_.resize(std::max(offsets_.size(), static_cast<std::size_t>(ordinal) + 1),
                  offsets_.back());
}

status shingle_store::adopt(uint32_t ordinal, std::size_t count) {
  if (!adopting_) return make_error(errc::internal, "shingle_store::adopt on a store not reopened");
  skip_to(ordinal);
  const uint64_t end = offsets_.back() + encoded_bytes(count);
  if (end > flushed_) return corrupt_error(dir_);
  offsets_.push_back(end);
  return {};
}

status shingle_store::end_adopting() {
  if (!adopting_) return {};
  adopting_ = false;
  flushed_ = offsets_.back();
  if (::ftruncate(fd_, static_cast<off_t>(flushed_)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(flushed_), SEEK_SET) < 0) {
    return make_error(errc::io_error, "cannot cut " + dir_ + ": " + system_reason(errno));
  }
  return {};
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
      failure_(std::move(other.failure_)),
      adopting_(other.adopting_) {
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
    adopting_ = other.adopting_;
  }
  return *this;
}

shingle_store::~shingle_store() {
  if (fd_ >= 0) ::close(fd_);
}

status shingle_store::put(uint32_t ordinal, std::span<const uint32_t> hashes) {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  if (adopting_) return make_error(errc::internal, "shingle_store::put before end_adopting");
  skip_to(ordinal);
  const std::size_t bytes = encoded_bytes(hashes.size());
  const std::size_t old = buffer_.size();
  buffer_.resize(old + bytes + 1);
  encode_array(hashes, buffer_.data() + old);
  buffer_.resize(old + bytes);
  offsets_.push_back(offsets_.back() + bytes);
  if (buffer_.size() >= buffer_bytes_) return write_buffer();
  return {};
}

status shingle_store::write_buffer() {
  if (const int err = detail::write_all(fd_, buffer_.data(), buffer_.size()); err != 0) {
    failure_ = "cannot write the temporary file of --verify in " + dir_ + ": " +
               system_reason(err) + " (" + std::to_string(buffer_.size()) + " more bytes needed, " +
               std::to_string(flushed_) + " written so far; free space or set --tmp-dir)";
    return make_error(write_errc(err), failure_);
  }
  flushed_ += buffer_.size();
  buffer_.clear();
  return {};
}

status shingle_store::flush() {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  return buffer_.empty() ? status{} : write_buffer();
}

std::size_t shingle_store::count(uint32_t ordinal) const noexcept {
  if (static_cast<std::size_t>(ordinal) + 1 >= offsets_.size()) return 0;
  const std::size_t n = count_of_bytes(offsets_[ordinal + 1] - offsets_[ordinal]);
  return n == SIZE_MAX ? 0 : n;
}

status shingle_store::read_bytes(uint64_t begin, uint64_t end, std::vector<uint8_t>& scratch,
                                 const uint8_t*& data) const {
  if (begin >= flushed_) {
    data = buffer_.data() + (begin - flushed_);
    return {};
  }
  scratch.resize(end - begin);
  // Arrays are written whole or not at all, so begin < flushed_ means end <= flushed_.
  if (const int err = detail::read_all_at(fd_, scratch.data(), scratch.size(), begin); err != 0) {
    return make_error(errc::io_error, "cannot read back the temporary file of --verify in " + dir_ +
                                          ": " + system_reason(err));
  }
  data = scratch.data();
  return {};
}

status shingle_store::get(uint32_t ordinal, std::vector<uint32_t>& out) const {
  if (static_cast<std::size_t>(ordinal) + 1 >= offsets_.size()) {
    out.clear();
    return {};
  }
  const uint64_t begin = offsets_[ordinal];
  const uint64_t end = offsets_[ordinal + 1];
  const std::size_t n = count_of_bytes(end - begin);
  if (n == SIZE_MAX) return corrupt_error(dir_);
  thread_local std::vector<uint8_t> scratch;
  const uint8_t* data = nullptr;
  if (auto st = read_bytes(begin, end, scratch, data); !st) return st;
  if (!decode_array(data, static_cast<std::size_t>(end - begin), n, out)) {
    return corrupt_error(dir_);
  }
  return {};
}

status shingle_store::top_byte_counts(uint32_t ordinal, std::array<uint32_t, 256>& counts) const {
  counts.fill(0);
  if (static_cast<std::size_t>(ordinal) + 1 >= offsets_.size()) return {};
  const uint64_t begin = offsets_[ordinal];
  const uint64_t end = offsets_[ordinal + 1];
  const std::size_t n = count_of_bytes(end - begin);
  if (n == SIZE_MAX) return corrupt_error(dir_);
  if (n == 0) return {};
  thread_local std::vector<uint8_t> scratch;
  const uint8_t* bits = nullptr;
  if (auto st = read_bytes(begin + 3 * n, end, scratch, bits); !st) return st;
  // Bucket b ends at the b-th zero bit; its count is the ones since the zero before.
  const auto bitmap_bytes = static_cast<std::size_t>(end - begin - 3 * n);
  std::size_t bucket = 0, previous_zero = 0, ones = 0;
  for (std::size_t at = 0; at < bitmap_bytes && bucket < kBuckets; at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bits + at, std::min<std::size_t>(8, bitmap_bytes - at));
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
    uint64_t zeros = ~word;
    if (bitmap_bytes - at < 8) zeros &= (uint64_t{1} << (8 * (bitmap_bytes - at))) - 1;
    while (zeros != 0 && bucket < kBuckets) {
      const std::size_t zero = at * 8 + static_cast<std::size_t>(std::countr_zero(zeros));
      zeros &= zeros - 1;
      counts[bucket++] = static_cast<uint32_t>(zero - previous_zero);
      ones += zero - previous_zero;
      previous_zero = zero + 1;
    }
  }
  if (bucket != kBuckets || ones != n) return corrupt_error(dir_);
  return {};
}
}  // namespace simdup
