// Buffered line access over a byte_source, for every record reader. One record may be as large
// as max_record bytes; memory stays bounded by that plus one read chunk.
#pragma once

#include "io/byte_source.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// Bytes guaranteed readable after the end of every line view (simdjson needs 64).
inline constexpr std::size_t kLinePadding = 64;

enum class line_status {
  ok,        ///< `line` holds the next line
  end,       ///< end of input
  too_long,  ///< the line exceeded max_record bytes; it has been skipped
  error,     ///< read or decompression error; `error` says why
};

class line_input {
 public:
  line_input(std::unique_ptr<byte_source> source, std::size_t max_record);

  /// The next line without its terminator ("\n" or "\r\n"). The view stays valid until the next
  /// call, and kLinePadding bytes after its end are readable. A UTF-8 byte-order mark at the
  /// start of the stream is dropped. A last line without a terminator is still a line.
  line_status next_line(std::string_view& line, error_info& error);

  /// Terminator of the last line: "\n", "\r\n" or "" (the last line of the input).
  std::string_view terminator() const noexcept { return terminator_; }
  /// 1-based number of the last line returned.
  uint64_t line_number() const noexcept { return line_number_; }
  /// Numbers the lines as if `lines` came before the first (a stream that starts mid-file);
  /// call before reading.
  void number_after(uint64_t lines) noexcept { line_number_ = lines; }
  /// Offset of the last line's first byte in the decompressed stream.
  uint64_t line_offset() const noexcept { return line_offset_; }
  /// Offset of the next unread byte.
  uint64_t position() const noexcept { return consumed_ + begin_; }
  /// The '"' bytes of the last line skipped as too_long (CSV keeps its quote parity with it).
  uint64_t skipped_quotes() const noexcept { return skipped_quotes_; }

  /// Appends exactly `n` bytes to `out` (a WARC block), or with `out` null skips them without
  /// keeping them (a block over the record limit). Fewer at end of input: returns false.
  result<bool> read_exact(std::size_t n, std::string* out);

  /// Up to `n` upcoming bytes, not consumed (format sniffing).
  result<std::string_view> peek(std::size_t n);

 private:
  /// Reads more bytes after end_, growing the buffer up to max_record; false at end of input.
  result<bool> fill();
  void compact();
  /// Zeroes the kLinePadding bytes at the end of buf_ (past any data read()).
  void zero_padding();

  std::unique_ptr<byte_source> source_;
  std::size_t max_record_;
  std::size_t chunk_;  ///< free bytes a read needs, else the buffer grows; doubles to kChunk
  read_buffer buf_;
  std::size_t begin_ = 0;  ///< first unconsumed byte
  std::size_t end_ = 0;    ///< one past the last valid byte
  uint64_t consumed_ = 0;  ///< stream offset of buf_[0]
  uint64_t line_number_ = 0;
  uint64_t skipped_quotes_ = 0;
  uint64_t line_offset_ = 0;
  std::string_view terminator_;
  bool eof_ = false;
  bool bom_checked_ = false;
};

}  // namespace simdup::detail
