// Fixed-width records by document ordinal (a MinHash document's band keys, a candidate sketch)
// that the batch engine appends while reading and reads back in the near layer. They stay in
// memory until spill() moves them to an unlinked temporary file, which later appends extend;
// readers then go through the file: a whole pass in ordinal order (scan), or the records of
// some ordinals (gather). Under --memory-limit this is where most per-document bytes go.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace simdup::detail {

class record_column {
 public:
  /// Records of `width` bytes (at least 1); `what` names the column in errors.
  record_column(std::size_t width, std::string what);

  /// Appends the next ordinal's record (width bytes). On a spilled column errc::io_error
  /// naming the directory and the reason (e.g. "No space left on device") when the write
  /// fails; every later call then fails the same way.
  status append(std::span<const uint8_t> record);
  /// Moves the records held in memory to a new unlinked file in `dir` (empty: the system's
  /// temporary directory); later appends go there. Errors as append(), or the file cannot be
  /// made. A second call does nothing.
  status spill(const std::string& dir);
  /// Writes buffered appends to the file (before reading a spilled column).
  status flush();

  /// Hands the records in ordinal order to `block(first ordinal, records)`, a block at a time
  /// (at most 1 MiB of them). errc::io_error when the file cannot be read back.
  status scan(const std::function<void(uint32_t first, std::span<const uint8_t>)>& block) const;
  /// Fills `out` with the records of `ordinals` (ascending, distinct, each below size()), width
  /// bytes each, in that order. Errors as scan().
  status gather(std::span<const uint32_t> ordinals, std::vector<uint8_t>& out) const;
  /// The records when in memory (size() * width bytes), else nullptr.
  const uint8_t* data() const noexcept { return spilled() ? nullptr : memory_.data(); }

  std::size_t width() const noexcept { return width_; }
  uint64_t size() const noexcept { return count_; }
  bool spilled() const noexcept { return fd_ >= 0; }
  /// Bytes held in memory (the records, or the write buffer of a spilled column).
  std::size_t memory_bytes() const noexcept { return memory_.capacity(); }
  /// Bytes written to the file, those of a released column included.
  uint64_t spilled_bytes() const noexcept { return written_; }
  /// Drops every record and the file (spilled_bytes() stays).
  void release() noexcept;

  record_column(record_column&& other) noexcept;
  record_column& operator=(record_column&& other) noexcept;
  record_column(const record_column&) = delete;
  record_column& operator=(const record_column&) = delete;
  ~record_column();

 private:
  status write_buffer();
  status read_at(uint64_t offset, uint8_t* into, std::size_t bytes) const;

  std::size_t width_;
  std::string what_;
  std::string dir_;
  int fd_ = -1;
  uint64_t count_ = 0;
  uint64_t flushed_ = 0;         // bytes in the file; memory_ holds what follows
  uint64_t written_ = 0;         // bytes ever written to a file
  std::vector<uint8_t> memory_;  // every record, or (spilled) the write buffer
  std::string failure_;
};

/// Calls each(ordinal, value) with the `index`-th uint64 of every record (a band's MinHash key),
/// in ordinal order. Errors as record_column::scan().
template <typename Each>
status for_each_word(const record_column& column, std::size_t index, Each&& each) {
  const std::size_t width = column.width(), at = index * sizeof(uint64_t);
  return column.scan([&](uint32_t first, std::span<const uint8_t> block) {
    uint32_t ordinal = first;
    for (std::size_t record = 0; record < block.size(); record += width, ++ordinal) {
      uint64_t value;
      std::memcpy(&value, block.data() + record + at, sizeof value);
      each(ordinal, value);
    }
  });
}

}  // namespace simdup::detail
