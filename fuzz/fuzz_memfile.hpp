// A file in memory (memfd) for harnesses of loaders that take a path: each input is written
// into it and the loader opens /proc/self/fd/N, so a run costs no disk I/O and leaves no files.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace simdup::fuzz {

class mem_file {
 public:
  mem_file() : fd_(::memfd_create("simdup-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();  // no memfd: nothing can be fuzzed
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~mem_file() { ::close(fd_); }
  mem_file(const mem_file&) = delete;
  mem_file& operator=(const mem_file&) = delete;

  /// Replaces the file's contents with `bytes`; returns its path.
  const std::string& write(std::string_view bytes) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace simdup::fuzz

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace simdup::fuzz {

/// A private directory in /dev/shm (tmpfs; /tmp where there is none), removed with the object,
/// for loaders that look files up by name inside a directory (jieba's data directory).
class shm_dir {
 public:
  shm_dir() {
    std::string tmpl = std::filesystem::exists("/dev/shm") ? "/dev/shm/simdup-fuzz-XXXXXX"
                                                           : "/tmp/simdup-fuzz-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~shm_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  shm_dir(const shm_dir&) = delete;
  shm_dir& operator=(const shm_dir&) = delete;

  /// Replaces NAME's contents with `bytes`; returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::string p = path_ + "/" + name;
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      std::abort();
    std::fclose(f);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace simdup::fuzz
