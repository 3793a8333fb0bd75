// The output directory of a dedup run, written atomically: everything goes to a fresh
// DIR.tmp-XXXXXX next to DIR, which becomes DIR only when the run succeeded. A failed run
// removes its temporary directory, so no half-written result ever looks complete. DIR may be
// missing or an empty directory; a non-empty one is refused up front unless the caller asks
// to replace it (--force), which swaps the new result in with one atomic rename. The run
// holds an flock on its staging directory; one killed with SIGKILL cannot clean up, and the
// next run for the same DIR removes staging directories whose lock nobody holds any more,
// unless it resumes one (--resume: the directory's journal, run_journal.hpp).
#pragma once

#include <simdup/error.hpp>

#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

class output_dir {
 public:
  /// Creates the temporary directory. `final_path` may end in '/' or start with "./".
  /// errc::invalid_argument when it names no directory we could replace (".", "/"), exists and
  /// is not a directory, or is a non-empty directory and `replace` is false. Removes stale
  /// DIR.tmp-* directories of runs that died (their lock is free); see stale_removed().
  static result<output_dir> create(const std::filesystem::path& final_path, bool replace = false,
                                   bool resume = false);

  /// With `resume`, create() took over the staging directory of an interrupted run that holds
  /// a resume journal (`journal_dir` in it; the newest such, its other files removed) instead of
  /// removing it.
  bool resumed() const noexcept { return resumed_; }
  /// The resume journal's directory in the staging directory.
  std::filesystem::path journal_dir() const { return temp_ / "resume"; }
  /// A run that fails from now on leaves its journal (and only it) in the staging directory, for
  /// a later --resume; the next run without --resume removes it as stale.
  void keep_journal_on_failure(bool keep) noexcept { keep_journal_ = keep; }

  /// Stale staging directories create() removed.
  const std::vector<std::filesystem::path>& stale_removed() const noexcept { return stale_; }

  /// Where files are written until commit().
  const std::filesystem::path& temp_path() const noexcept { return temp_; }
  const std::filesystem::path& final_path() const noexcept { return final_; }
  /// Moves the temporary directory to the final path: a plain rename, which only replaces an
  /// empty directory (so one filled meanwhile is not lost), or with `replace` an atomic
  /// exchange with the existing directory, whose old contents are then removed.
  status commit();

  output_dir(output_dir&& other) noexcept;
  output_dir& operator=(output_dir&&) = delete;
  ~output_dir();

 private:
  output_dir(std::filesystem::path final_path, std::filesystem::path temp, int lock_fd,
             bool replace)
      : final_(std::move(final_path)),
        temp_(std::move(temp)),
        lock_fd_(lock_fd),
        replace_(replace) {}
  std::filesystem::path final_;
  std::filesystem::path temp_;
  int lock_fd_ = -1;  ///< the staging directory, opened and flock()ed while the run lives
  bool replace_ = false;
  bool done_ = false;
  bool resumed_ = false;
  bool keep_journal_ = false;
  std::vector<std::filesystem::path> stale_;
};

/// A buffered output file, optionally zstd-compressed. Errors (disk full) surface at write,
/// flush or close as errc::io_error naming the file.
class file_sink {
 public:
  static result<file_sink> open(const std::filesystem::path& path, bool zstd, int level = 3);

  status write(std::string_view bytes);
  /// Finishes the zstd frame, flushes and closes. Required for a complete file.
  status close();

  file_sink(file_sink&& other) noexcept;
  file_sink& operator=(file_sink&&) = delete;
  ~file_sink();

 private:
  file_sink(std::FILE* f, std::string name, ZSTD_CCtx* z)
      : file_(f), name_(std::move(name)), zstd_(z) {}
  status drain(std::string_view bytes, ZSTD_EndDirective mode);
  status put(const char* data, std::size_t size);

  std::FILE* file_ = nullptr;
  std::string name_;
  ZSTD_CCtx* zstd_ = nullptr;
  std::string buffer_;
  std::string compressed_;
};

}  // namespace simdup::detail
