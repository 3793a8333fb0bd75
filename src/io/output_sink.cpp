#include <simdup/output_sink.hpp>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace simdup {
namespace {
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

/// Six characters for a temporary file's name, from getrandom (or, where it fails, the pid, a
/// counter and the clock: O_EXCL catches a name already taken either way).
std::string random_suffix() {
  static std::atomic<uint64_t> calls{0};
  uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
    bits = (static_cast<uint64_t>(::getpid()) << 40) ^ (calls.fetch_add(1) << 20) ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out(6, 'x');
  for (char& c : out) {
    c = kChars[bits % 62];
    bits /= 62;
  }
  return out;
}
}  // namespace

output_sink::output_sink(int fd, std::string path, std::string temp_path)
    : fd_(fd), path_(std::move(path)), temp_path_(std::move(temp_path)) {
  buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
}

output_sink::output_sink(output_sink&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      buffer_(std::move(other.buffer_)),
      broken_pipe_(other.broken_pipe_),
      committed_(other.committed_) {
  other.fd_ = -1;
  other.temp_path_.clear();
}

output_sink::~output_sink() {
  if (temp_path_.empty() && fd_ > STDERR_FILENO) ::close(fd_);  // a device or FIFO we opened
  if (!temp_path_.empty()) {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_path_.c_str());
  }
}

result<output_sink> output_sink::open(const std::string& path) {
  if (path == "-") return output_sink(STDOUT_FILENO, path, "");
  // A device or FIFO (-o /dev/null) is written in place: renaming a temporary file over it
  // would replace the device node itself.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return make_error(errc::io_error, "cannot open " + path + ": " + std::strerror(errno));
    }
    return output_sink(fd, path, "");
  }
  // Created with mode 0666 for the kernel to apply the umask, as to any new file. mkstemp's 0600
  // would need the umask to widen it, and reading it (umask() sets it) changes it for every
  // thread of the process for an instant.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temp = path + ".tmp." + random_suffix();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return make_error(errc::io_error, "cannot create " + temp + ": " + std::strerror(errno));
  }
  return output_sink(fd, path, temp);
}

status output_sink::flush() {
  std::size_t done = 0;
  while (done < buffer_.size() && !broken_pipe_) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE && temp_path_.empty()) {
      broken_pipe_ = true;
      break;
    }
    const std::string name = path_ == "-" ? "stdout" : path_;
    return make_error(errc::io_error, "cannot write " + name + ": " + std::strerror(errno));
  }
  buffer_.clear();
  return {};
}

status output_sink::write(std::string_view bytes) {
  if (broken_pipe_) return {};
  buffer_.append(bytes);
  if (buffer_.size() >= kFlushBytes) return flush();
  return {};
}

status output_sink::commit() {
  if (auto st = flush(); !st) return st;
  if (temp_path_.empty()) return {};
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return make_error(errc::io_error, "cannot write " + path_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return make_error(errc::io_error,
                      "cannot rename " + temp_path_ + " to " + path_ + ": " + std::strerror(errno));
  }
  committed_ = true;
  return {};
}

}  // namespace simdup
