// Buffered output to stdout or a file. A file is written to a temporary name in the same
// directory and renamed only by commit(), so a failed run never leaves a half-written file
// that looks complete. A closed pipe on stdout (EPIPE) is a normal end, not an error.
#pragma once

#include <simdup/error.hpp>

#include <string>
#include <string_view>

namespace simdup {

class output_sink {
 public:
  /// "-" is stdout; a device or FIFO (/dev/null) is written in place; anything else a file
  /// created atomically on commit().
  static result<output_sink> open(const std::string& path);

  /// Buffers `bytes`, writing when the buffer is large. After the reader of a pipe went away,
  /// writes are dropped and broken_pipe() is true; the caller should stop producing.
  status write(std::string_view bytes);
  /// Flushes; for a file, also makes it durable and renames it into place.
  status commit();
  /// True once stdout's reader closed the pipe.
  bool broken_pipe() const noexcept { return broken_pipe_; }

  output_sink(output_sink&& other) noexcept;
  output_sink& operator=(output_sink&&) = delete;
  output_sink(const output_sink&) = delete;
  ~output_sink();  ///< removes the temporary file unless committed

 private:
  output_sink(int fd, std::string path, std::string temp_path);
  status flush();

  int fd_ = -1;
  std::string path_;       ///< final name ("-" for stdout)
  std::string temp_path_;  ///< temporary name (empty for stdout)
  std::string buffer_;
  bool broken_pipe_ = false;
  bool committed_ = false;
};

}  // namespace simdup
