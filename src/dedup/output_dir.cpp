#include "dedup/output_dir.hpp"

#include "dedup/run_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>

namespace simdup::detail {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;

std::string random_suffix() {
  static constexpr char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string s(6, 'x');
  for (char& c : s) c = chars[rd() % (sizeof chars - 1)];
  return s;
}

error_info io_error(const std::string& what, const fs::path& path, const std::error_code& ec) {
  return make_error(errc::io_error, what + " " + path.string() + ": " + ec.message());
}

error_info errno_error(const std::string& what, const fs::path& path) {
  return io_error(what, path, std::error_code(errno, std::generic_category()));
}

/// Opens `dir` and takes its lock without waiting; -1 when it is held (or cannot be opened).
int lock_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Removes every entry of `dir` but `keep`.
void remove_all_but(const fs::path& dir, const std::string& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename() == keep) continue;
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
  }
}

/// Removes TARGET.tmp-* directories nobody holds a lock on: their run was killed (a lock dies
/// with its process). Live runs for the same TARGET keep theirs. With `adopt`, the newest of
/// them that holds a resume journal is kept instead, locked (`adopted_fd`), with only its
/// journal left in it.
std::vector<fs::path> remove_stale(const fs::path& parent, const fs::path& target, bool adopt,
                                   fs::path& adopted, int& adopted_fd) {
  std::vector<fs::path> removed;
  const std::string prefix = target.filename().string() + ".tmp-";
  std::error_code ec;
  std::vector<std::pair<fs::path, int>> stale;  // locked
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const int fd = lock_directory(entry.path());
    if (fd >= 0) stale.emplace_back(entry.path(), fd);
  }
  if (adopt) {
    fs::file_time_type newest = fs::file_time_type::min();
    for (const auto& [path, fd] : stale) {
      const auto when = fs::last_write_time(path / "resume" / "chunks.bin", ec);
      if (!ec && (adopted.empty() || when > newest)) {
        adopted = path;
        newest = when;
      }
    }
  }
  for (const auto& [path, fd] : stale) {
    if (path == adopted) {
      adopted_fd = fd;
      remove_all_but(path, "resume");
      continue;
    }
    std::error_code rm;
    remove_journal(path / "resume");  // its shingle file may be in another directory
    fs::remove_all(path, rm);
    ::close(fd);
    if (!rm) removed.push_back(path);
  }
  return removed;
}

}  // namespace

result<output_dir> output_dir::create(const fs::path& final_path, bool replace, bool resume) {
  std::error_code ec;
  fs::path target = final_path.lexically_normal();
  // "out/" normalises to "out/", whose file name is empty: the directory is its parent path.
  // Without this the staging directory would be "out/.tmp-X", inside the output itself.
  if (!target.has_filename()) target = target.parent_path();
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return make_error(errc::invalid_argument,
                      "--out " + final_path.string() +
                          ": name a directory to create, not the current, parent or root "
                          "directory");
  }
  const auto st = fs::symlink_status(target, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) {
      return make_error(errc::invalid_argument,
                        "--out " + target.string() + " exists and is not a directory");
    }
    if (!replace && !fs::is_empty(target, ec)) {
      return make_error(errc::invalid_argument,
                        "--out " + target.string() +
                            " exists and is not empty; refusing to replace it (--force "
                            "replaces it)");
    }
  }
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec) return io_error("cannot create", parent, ec);
  fs::path adopted;
  int adopted_fd = -1;
  std::vector<fs::path> stale = remove_stale(parent, target, resume, adopted, adopted_fd);
  if (adopted_fd >= 0) {
    output_dir out(target, adopted, adopted_fd, replace);
    out.stale_ = std::move(stale);
    out.resumed_ = true;
    return out;
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    // Made and locked under a name the stale scan ignores, then renamed: a .tmp- directory is
    // locked for as long as its run lives, so a concurrent run never takes it for stale.
    const std::string suffix = random_suffix();
    fs::path init = target;
    init += ".init-" + suffix;
    fs::path temp = target;
    temp += ".tmp-" + suffix;
    if (!fs::create_directory(init, ec)) {
      if (ec) return io_error("cannot create", init, ec);
      continue;
    }
    const int fd = lock_directory(init);
    if (fd < 0) {
      error_info err = errno_error("cannot lock", init);
      fs::remove(init, ec);
      return err;
    }
    if (::renameat2(AT_FDCWD, init.c_str(), AT_FDCWD, temp.c_str(), RENAME_NOREPLACE) != 0) {
      ::close(fd);
      fs::remove(init, ec);
      continue;
    }
    output_dir out(target, temp, fd, replace);
    out.stale_ = std::move(stale);
    return out;
  }
  return make_error(errc::io_error,
                    "cannot create a temporary directory next to " + target.string());
}

status output_dir::commit() {
  // Without replace, rename() takes the place of a missing or empty DIR and fails (ENOTEMPTY)
  // if another process filled it since create(). With replace, an existing DIR is exchanged
  // with the new result in one step, so DIR is at every moment either the old or the new one.
  if (replace_ &&
      ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) == 0) {
    done_ = true;
    std::error_code ec;
    fs::remove_all(temp_, ec);  // now the old contents
    return {};
  }
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      return make_error(errc::io_error, "--out " + final_.string() +
                                            " was filled by someone else during the run; "
                                            "refusing to replace it (--force replaces it)");
    }
    return errno_error("cannot move the result into", final_);
  }
  done_ = true;
  return {};
}

output_dir::output_dir(output_dir&& other) noexcept
    : final_(std::move(other.final_)),
      temp_(std::move(other.temp_)),
      lock_fd_(other.lock_fd_),
      replace_(other.replace_),
      done_(other.done_),
      resumed_(other.resumed_),
      keep_journal_(other.keep_journal_),
      stale_(std::move(other.stale_)) {
  other.done_ = true;
  other.lock_fd_ = -1;
}

output_dir::~output_dir() {
  if (!done_ && !temp_.empty()) {
    std::error_code ec;
    if (keep_journal_ && fs::exists(journal_dir(), ec)) {
      remove_all_but(temp_, "resume");
    } else {
      remove_journal(journal_dir());
      fs::remove_all(temp_, ec);
    }
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

result<file_sink> file_sink::open(const fs::path& path, bool zstd, int level) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    return make_error(errc::io_error,
                      "cannot create " + path.string() + ": " + std::strerror(errno));
  }
  ZSTD_CCtx* z = nullptr;
  if (zstd) {
    z = ZSTD_createCCtx();
    if (!z || ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level))) {
      ZSTD_freeCCtx(z);
      std::fclose(f);
      return make_error(errc::internal, "cannot set up zstd for " + path.string());
    }
  }
  file_sink sink(f, path.string(), z);
  sink.buffer_.reserve(kBufferBytes);
  return sink;
}

status file_sink::put(const char* data, std::size_t size) {
  if (size != 0 && std::fwrite(data, 1, size, file_) != size) {
    return make_error(errc::io_error, "cannot write " + name_ + ": " + std::strerror(errno));
  }
  return {};
}

status file_sink::drain(std::string_view bytes, ZSTD_EndDirective mode) {
  if (!zstd_) return put(bytes.data(), bytes.size());
  compressed_.resize(ZSTD_CStreamOutSize());
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  for (;;) {
    ZSTD_outBuffer out{compressed_.data(), compressed_.size(), 0};
    const std::size_t left = ZSTD_compressStream2(zstd_, &out, &in, mode);
    if (ZSTD_isError(left)) {
      return make_error(errc::internal, "zstd failed on " + name_ + ": " + ZSTD_getErrorName(left));
    }
    if (auto st = put(compressed_.data(), out.pos); !st) return st;
    const bool finished = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
    if (finished) return {};
  }
}

status file_sink::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) {
    if (auto st = drain(buffer_, ZSTD_e_continue); !st) return st;
    buffer_.clear();
    if (bytes.size() > kBufferBytes) return drain(bytes, ZSTD_e_continue);
  }
  buffer_.append(bytes);
  return {};
}

status file_sink::close() {
  if (!file_) return {};
  status st = drain(buffer_, zstd_ ? ZSTD_e_end : ZSTD_e_continue);
  buffer_.clear();
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (st && (!flushed || !closed)) {
    st = make_error(errc::io_error, "cannot write " + name_ + ": " + std::strerror(errno));
  }
  return st;
}

file_sink::file_sink(file_sink&& other) noexcept
    : file_(other.file_),
      name_(std::move(other.name_)),
      zstd_(other.zstd_),
      buffer_(std::move(other.buffer_)),
      compressed_(std::move(other.compressed_)) {
  other.file_ = nullptr;
  other.zstd_ = nullptr;
}

file_sink::~file_sink() {
  if (file_) std::fclose(file_);
  ZSTD_freeCCtx(zstd_);
}

}  // namespace simdup::detail
