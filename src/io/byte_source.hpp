// Byte streams under the record readers: files, stdin, memory, and gzip/zstd decompression.
#pragma once

#include <simdup/error.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace simdup::detail {

/// Allocates like std::allocator but leaves new elements default-initialised (uninitialised
/// bytes), for buffers that read() fills before they are looked at.
template <class T>
struct default_init_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  default_init_allocator() = default;
  template <class U>
  explicit default_init_allocator(const default_init_allocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// The buffer of a reader: every input opened gets a few hundred kilobytes of them, which a
/// std::vector<char> would zero, touching every page for inputs of a few bytes (most of the
/// time of a fuzz run over small inputs went to those page faults).
using read_buffer = std::vector<char, default_init_allocator<char>>;

/// Readers start with read chunks this small and double them with each read up to their full
/// size (hundreds of KiB): an input of a few bytes (an HTTP body, a small file, a fuzz input)
/// no longer allocates the full buffers, which under ASan are a fresh mmap per input; a large
/// one reaches the full size within a few reads.
inline constexpr std::size_t kFirstReadChunk = std::size_t{1} << 14;

/// A sequential stream of bytes. read() returns 0 only at the end of the stream.
class byte_source {
 public:
  virtual ~byte_source() = default;
  /// Reads up to `size` bytes into `buffer`; 0 means end of stream. Errors name the input.
  virtual result<std::size_t> read(char* buffer, std::size_t size) = 0;
};

/// Opens `path` ("-" = stdin) and, when its first bytes are the gzip (1f 8b) or zstd
/// (28 b5 2f fd) magic, wraps it in the matching decompressor. `name` is used in messages;
/// `raw_bytes` (optional) counts the bytes read before decompression. A directory is
/// errc::invalid_input, a missing file errc::not_found. When `cancel` (optional) becomes true,
/// a read of a pipe or terminal returns errc::io_error "... interrupted" within 0.1 s instead of
/// waiting for data.
result<std::unique_ptr<byte_source>> open_source(const std::string& path, const std::string& name,
                                                 uint64_t* raw_bytes,
                                                 const std::atomic<bool>* cancel = nullptr);

/// read(2) of `fd`, retried on EINTR. With `cancel`, waits in 0.1 s poll() slices and returns
/// errc::io_error "reading NAME interrupted" once the flag holds. Errors name the input.
result<std::size_t> read_fd(int fd, char* buffer, std::size_t size, const std::string& name,
                            const std::atomic<bool>* cancel);

/// True when `head`, the first bytes of an input (4 suffice), starts a gzip or zstd stream that
/// open_source and open_memory_source decompress (the zstd magic or a skippable frame).
bool starts_compressed(std::string_view head) noexcept;

/// Same for a buffer held in memory.
result<std::unique_ptr<byte_source>> open_memory_source(std::string data, const std::string& name,
                                                        uint64_t* raw_bytes);

/// A short stable name for why an input could not be read to its end (the summaries' skipped
/// reasons): "missing_file", "not_a_file" (a directory), "truncated_input" (a .gz/.zst that
/// ends inside a member/frame), "corrupt_input", "binary_input" (errc::unsupported: not text),
/// "unreadable_input" (other I/O errors).
const char* input_failure_reason(const error_info& error) noexcept;

}  // namespace simdup::detail
