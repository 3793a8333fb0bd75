#include "util/temp_file.hpp"

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace simdup::detail {

int open_unlinked_temp(const std::string& dir, const char* prefix, std::string& where) {
  where = dir;
  if (where.empty()) {
    std::error_code ec;
    where = std::filesystem::temp_directory_path(ec).string();
    if (ec) where = "/tmp";
  }
  std::string name = where + "/" + prefix + "-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

int write_all(int fd, const void* data, std::size_t bytes) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    // write() returns 0 only when nothing could be stored: treated as no space left.
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return 0;
}

int read_all_at(int fd, void* into, std::size_t bytes, uint64_t offset) noexcept {
  auto* p = static_cast<char*>(into);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace simdup::detail
