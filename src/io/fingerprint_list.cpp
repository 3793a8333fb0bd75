// Fingerprint lists (include/simdup/fingerprint_list.hpp): JSONL/TSV written by a fingerprint
// run, plain hex or decimal lines, or little-endian uint64.
#include <simdup/fingerprint_list.hpp>
#include <simdup/reader.hpp>
#include <simdup/simhash.hpp>

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/byte_source.hpp"
#include "io/format_reader.hpp"
#include "io/line_input.hpp"
#include "util/write_errc.hpp"

namespace simdup {

/// The files behind a list on files: regions of binary inputs read in place and of the spill
/// file, in input order, and the spilled ids.
struct fingerprint_list::files {
  struct segment {
    std::string path;
    uint64_t offset = 0;  ///< bytes
    uint64_t count = 0;   ///< fingerprints
  };
  std::vector<segment> segments;
  uint64_t count = 0;
  uint64_t budget = 0;
  std::string parent;  ///< where the private directory is made
  std::string dir;     ///< the private spill directory, once made
  int fps_fd = -1, ids_fd = -1, ends_fd = -1;
  uint64_t fps_bytes = 0, id_bytes = 0, spilled = 0;
  uint64_t ids_spilled = 0;  ///< ids in the ids file
  bool text_ids = false;
  bool spill_failed = false;  ///< a spill write failed: the read stops, even under skip

  files() = default;
  files(const files&) = delete;
  files& operator=(const files&) = delete;
  ~files() {
    for (int fd : {fps_fd, ids_fd, ends_fd})
      if (fd >= 0) ::close(fd);
    if (dir.empty()) return;
    for (const char* name : {"fingerprints.u64", "ids.json", "id_ends.u64"})
      ::unlink((dir + "/" + name).c_str());
    ::rmdir(dir.c_str());
  }

  std::string path_of(const char* name) const { return dir + "/" + name; }

  status make_dir() {
    if (!dir.empty()) return {};
    std::string templ = parent + "/simdup-spill-XXXXXX";
    if (!::mkdtemp(templ.data())) {
      spill_failed = true;
      return make_error(errc::io_error, "cannot make a spill directory under " + parent + ": " +
                                            std::strerror(errno));
    }
    dir = templ;
    auto open_file = [&](const char* name, int& fd) -> status {
      fd = ::open(path_of(name).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) return {};
      spill_failed = true;
      return make_error(errc::io_error, path_of(name) + ": " + std::strerror(errno));
    };
    for (auto [name, fd] : {std::pair{"fingerprints.u64", &fps_fd}, std::pair{"ids.json", &ids_fd},
                            std::pair{"id_ends.u64", &ends_fd}})
      if (auto st = open_file(name, *fd); !st) return st;
    return {};
  }

  /// Writes all of `data` at the end of `fd`; a short write (a full disk) names the bytes.
  status append(int fd, const char* name, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    std::size_t left = size;
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const int e = w < 0 ? errno : ENOSPC;
        spill_failed = true;
        return make_error(write_errc(e),
                          "spilling fingerprints to " + path_of(name) + ": " + std::strerror(e) +
                              " (" + std::to_string(left) + " more bytes needed, " +
                              std::to_string(spilled + size - left) + " written so far)");
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    spilled += size;
    return {};
  }

  /// Adds a region, merged with the last one when it continues it.
  void add_segment(const std::string& path, uint64_t offset, uint64_t n) {
    if (n == 0) return;
    if (!segments.empty() && segments.back().path == path &&
        segments.back().offset + segments.back().count * 8 == offset)
      segments.back().count += n;
    else
      segments.push_back({path, offset, n});
    count += n;
  }
};

namespace {

/// Bytes the in-memory part of a list holds.
uint64_t memory_bytes(const fingerprint_list& list) {
  return list.fingerprints.size() * 8 + list.ids.size() + list.id_end.size() * 8;
}

/// Moves the in-memory part of the list to the spill files.
status spill(fingerprint_list& list) {
  fingerprint_list::files& f = *list.files_;
  if (list.fingerprints.empty()) return {};
  if (auto st = f.make_dir(); !st) return st;
  const std::size_t n = list.fingerprints.size();
  std::vector<uint64_t>& fps = list.fingerprints;
  if constexpr (std::endian::native == std::endian::big)
    for (uint64_t& v : fps) v = __builtin_bswap64(v);
  if (auto st = f.append(f.fps_fd, "fingerprints.u64", fps.data(), n * 8); !st) return st;
  f.add_segment(f.path_of("fingerprints.u64"), f.fps_bytes, n);
  f.fps_bytes += n * 8;
  if (!list.id_end.empty()) {
    f.text_ids = true;
    std::vector<uint64_t> ends(list.id_end.size());
    for (std::size_t i = 0; i < ends.size(); ++i) ends[i] = f.id_bytes + list.id_end[i];
    if (auto st = f.append(f.ids_fd, "ids.json", list.ids.data(), list.ids.size()); !st) return st;
    if (auto st = f.append(f.ends_fd, "id_ends.u64", ends.data(), ends.size() * 8); !st) return st;
    f.id_bytes += list.ids.size();
    f.ids_spilled += ends.size();
  }
  fps.clear();
  fps.shrink_to_fit();
  list.ids.clear();
  list.ids.shrink_to_fit();
  list.id_end.clear();
  list.id_end.shrink_to_fit();
  return {};
}

/// Spills when the in-memory part passed the budget.
status spill_if_over(fingerprint_list& list) {
  if (!list.files_ || memory_bytes(list) <= list.files_->budget) return {};
  return spill(list);
}

/// "16 hex digits" or a decimal uint64; only decimal when `decimal` (a 16-digit decimal number
/// such as 1000000000000000 is otherwise read as hex).
bool parse_plain(std::string_view s, uint64_t& out, bool decimal) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.size() == 16 && !decimal) {
    if (auto h = parse_hex(s)) {
      out = *h;
      return true;
    }
  }
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

enum class text_format { unknown, jsonl, tsv, plain };

/// Reads one text input into `list`. Errors are "NAME:LINE: reason"; with `skip`, malformed
/// lines are counted and reported in `list` instead, and reading goes on.
status read_fingerprint_text(const std::string& path, fingerprint_list& list, bool decimal,
                             bool skip) {
  const std::string name = path == "-" ? "<stdin>" : path;
  auto src = detail::open_source(path, name, nullptr);
  if (!src) return std::move(src).error();
  detail::line_input in(std::move(*src), std::size_t{64} << 20);
  simdjson::ondemand::parser parser;
  text_format format = text_format::unknown;
  std::string_view line;
  std::string id;  // a TSV id, unescaped
  error_info err;
  auto add = [&](uint64_t fp) {
    list.fingerprints.push_back(fp);
    list.id_end.push_back(list.ids.size());
  };
  // One non-blank line: empty when it was taken (or skipped by its status), else what is
  // wrong with it.
  auto parse_line = [&]() -> std::string {
    const auto bad = [](std::string why) { return why; };
    if (format == text_format::unknown) {
      const std::size_t first = line.find_first_not_of(" \t");
      format = line[first] == '{'                          ? text_format::jsonl
               : line.find('\t') != std::string_view::npos ? text_format::tsv
                                                           : text_format::plain;
    }
    if (format == text_format::plain) {
      uint64_t fp;
      if (!parse_plain(line, fp, decimal))
        return bad(decimal ? "expected a decimal fingerprint"
                           : "expected a fingerprint (16 hex digits or a decimal number)");
      json::append_uint(list.ids, in.line_number());
      add(fp);
      return {};
    }
    if (format == text_format::tsv) {
      // id<TAB>hex, or id<TAB><TAB>status for documents without a fingerprint.
      const std::size_t tab = line.find('\t');
      if (tab == std::string_view::npos) return bad("expected id<TAB>fingerprint");
      std::string_view rest = line.substr(tab + 1);
      if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
      const std::size_t tab2 = rest.find('\t');
      if (tab2 != std::string_view::npos) {
        if (rest.substr(tab2 + 1) != "ok") return {};  // a status column: not ok, no fingerprint
        rest = rest.substr(0, tab2);
      }
      auto fp = parse_hex(rest);
      if (!fp) return bad("expected 16 hex digits after the tab");
      detail::tsv_unescape(line.substr(0, tab), id);
      json::append_string(list.ids, id);
      add(*fp);
      return {};
    }
    // JSONL: {"id": ..., "fingerprint": "hex" | null, "status": "..."}
    namespace od = simdjson::ondemand;
    auto doc = parser.iterate(line.data(), line.size(), line.size() + detail::kLinePadding);
    od::object obj;
    if (doc.error() || doc.get_object().get(obj)) return bad("invalid JSON (expected an object)");
    std::string id_json;
    std::string_view hex;
    bool have_fp = false, skip_record = false;
    for (auto field : obj) {
      std::string_view key;
      od::value value;
      if (field.unescaped_key().get(key) || field.value().get(value)) return bad("invalid JSON");
      od::json_type type;
      if (value.type().get(type)) return bad("invalid JSON");
      if (key == "id") {
        if (type == od::json_type::string) {
          std::string_view s;
          if (value.get_string().get(s)) return bad("invalid JSON string in id");
          id_json.clear();
          json::append_string(id_json, s);
        } else if (type == od::json_type::number) {
          std::string_view raw = value.raw_json_token();
          while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
          id_json.assign(raw);
        } else if (type != od::json_type::null) {
          return bad("id must be a string or a number");
        }
      } else if (key == "fingerprint") {
        if (type == od::json_type::null) {
          skip_record = true;
        } else if (type != od::json_type::string || value.get_string().get(hex)) {
          return bad("fingerprint must be a string of 16 hex digits or null");
        } else {
          have_fp = true;
          // The view points into the parser's buffer, valid until the next iterate().
          if (!parse_hex(hex)) return bad("fingerprint must be 16 hex digits");
        }
      } else if (key == "status") {
        std::string_view s;
        if (type != od::json_type::string || value.get_string().get(s))
          return bad("status must be a string");
        if (s != "ok") skip_record = true;
      }
    }
    if (!doc.current_location().error()) return bad("unexpected content after the JSON object");
    if (skip_record) return {};
    if (!have_fp) return bad("missing \"fingerprint\"");
    if (id_json.empty()) json::append_uint(id_json, in.line_number());
    list.ids += id_json;
    add(*parse_hex(hex));
    return {};
  };
  while (true) {
    const auto st = in.next_line(line, err);
    if (st == detail::line_status::end) break;
    if (st == detail::line_status::error) return err;
    std::string why = st == detail::line_status::too_long ? "line longer than 64 MiB"
                      : detail::is_blank(line)            ? std::string()
                                                          : parse_line();
    if (auto spilled = spill_if_over(list); !spilled) return spilled;
    if (why.empty()) continue;
    std::string message = name + ":" + std::to_string(in.line_number()) + ": " + why;
    if (!skip) return make_error(errc::invalid_input, std::move(message));
    ++list.skipped_lines;
    if (list.skip_messages.size() < 20) list.skip_messages.push_back(std::move(message));
  }
  return {};
}

/// Reads a binary file of little-endian uint64 ("-" = stdin). A list on files takes a regular
/// file in place.
status read_fingerprint_binary(const std::string& path, fingerprint_list& list) {
  const std::string name = path == "-" ? "<stdin>" : path;
  struct stat info {};
  if (list.files_ && path != "-" && ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
    if (info.st_size % 8 != 0)
      return make_error(errc::invalid_input,
                        name + ": size is not a multiple of 8 bytes (little-endian uint64 values)");
    if (::access(path.c_str(), R_OK) != 0)
      return make_error(errc::not_found, name + ": " + std::strerror(errno));
    if (auto st = spill(list); !st) return st;  // what came before stays before it
    list.files_->add_segment(path, 0, static_cast<uint64_t>(info.st_size) / 8);
    return {};
  }
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return make_error(errc::not_found, name + ": " + std::strerror(errno));
  std::vector<char> buf(std::size_t{1} << 20);
  std::size_t carry = 0;  // bytes of an incomplete uint64 kept from the last read
  while (true) {
    const std::size_t got = std::fread(buf.data() + carry, 1, buf.size() - carry, f);
    if (got == 0) break;
    const std::size_t have = carry + got;
    const std::size_t whole = have / 8;
    const std::size_t old = list.fingerprints.size();
    list.fingerprints.resize(old + whole);
    std::memcpy(list.fingerprints.data() + old, buf.data(), whole * 8);
    if constexpr (std::endian::native == std::endian::big)
      for (std::size_t i = old; i < old + whole; ++i)
        list.fingerprints[i] = __builtin_bswap64(list.fingerprints[i]);
    carry = have - whole * 8;
    std::memmove(buf.data(), buf.data() + whole * 8, carry);
    if (auto st = spill_if_over(list); !st) {
      if (f != stdin) std::fclose(f);
      return st;
    }
  }
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) return make_error(errc::io_error, name + ": read error");
  if (carry)
    return make_error(errc::invalid_input,
                      name + ": size is not a multiple of 8 bytes (little-endian uint64 values)");
  return {};
}

}  // namespace

result<fingerprint_list> read_fingerprint_list(std::span<const std::string> inputs,
                                               const fingerprint_list_options& options) {
  const bool skip = options.skip_bad;
  fingerprint_list list;
  auto paths = expand_inputs(inputs, skip);
  if (!paths) return std::move(paths).error();
  if (options.memory_budget != 0) {
    list.files_ = std::make_shared<fingerprint_list::files>();
    list.files_->budget = options.memory_budget;
    const char* tmp = std::getenv("TMPDIR");
    list.files_->parent = !options.spill_dir.empty() ? options.spill_dir
                          : tmp && *tmp              ? tmp
                                                     : "/tmp";
  }
  // With several binary files, positions continue across files, so ids stay unique.
  for (const auto& p : *paths) {
    status s = options.binary ? read_fingerprint_binary(p, list)
                              : read_fingerprint_text(p, list, options.decimal, skip);
    if (s) continue;
    if (!skip || (list.files_ && list.files_->spill_failed)) return s.error();
    // The input could not be read (to its end): what it gave so far stays, the rest is skipped.
    ++list.skipped_inputs;
    if (list.skip_messages.size() < 20) list.skip_messages.push_back(s.error().message);
  }
  if (list.files_) {
    if (list.files_->segments.empty()) {
      list.files_.reset();  // it all fitted: an ordinary list in memory
    } else if (auto st = spill(list); !st) {
      return st.error();
    }
  }
  return list;
}

namespace {

/// Reads `count` fingerprints at byte `offset` of `path` into `block`. Little-endian hosts map
/// the page cache's pages in windows (a copy through read() cost more than the pairing on
/// large inputs) and unmap each before the next, so the mapping never adds up in memory; the
/// file's size is checked before each window, since touching a page past its end would raise
/// SIGBUS. Big-endian hosts read and swap.
status scan_segment(const std::string& path, uint64_t offset, uint64_t count,
                    const std::function<void(std::span<const uint64_t>)>& block) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(errc::io_error, path + ": " + std::strerror(errno));
  const auto fail = [&](const std::string& why) {
    ::close(fd);
    return make_error(errc::io_error, path + ": " + why);
  };
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  constexpr uint64_t window = uint64_t{4} << 20;  // counted in all_pairs_pass_bytes
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t end = offset + count * 8;
  for (uint64_t at = offset; at < end;) {
    const uint64_t bytes = std::min(window, end - at);
    struct stat info {};
    if (::fstat(fd, &info) != 0) return fail(std::strerror(errno));
    if (static_cast<uint64_t>(info.st_size) < at + bytes)
      return fail("the file became shorter while being read");
    if constexpr (std::endian::native == std::endian::little) {
      const uint64_t base = at / page * page;  // mappings start on a page
      const std::size_t length = static_cast<std::size_t>(at + bytes - base);
      void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd,
                       static_cast<off_t>(base));
      if (p == MAP_FAILED) return fail(std::strerror(errno));
      block(std::span<const uint64_t>(
          reinterpret_cast<const uint64_t*>(static_cast<const char*>(p) + (at - base)),
          static_cast<std::size_t>(bytes / 8)));
      ::munmap(p, length);
    } else {
      std::vector<uint64_t> buf(static_cast<std::size_t>(bytes / 8));
      std::size_t got = 0;
      while (got < bytes) {
        const ssize_t r = ::pread(fd, reinterpret_cast<char*>(buf.data()) + got, bytes - got,
                                  static_cast<off_t>(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return fail(r < 0 ? std::strerror(errno) : "the file became shorter");
        got += static_cast<std::size_t>(r);
      }
      for (uint64_t& v : buf) v = __builtin_bswap64(v);
      block(std::span<const uint64_t>(buf));
    }
    at += bytes;
  }
  ::close(fd);
  return {};
}

}  // namespace

uint64_t fingerprint_list::size() const noexcept {
  return files_ ? files_->count : fingerprints.size();
}

uint64_t fingerprint_list::spilled_bytes() const noexcept {
  return files_ ? files_->spilled : 0;
}

fingerprint_scan fingerprint_list::scan() const {
  if (!files_) {
    return {fingerprints.size(), [this](const auto& block) -> status {
              block(std::span<const uint64_t>(fingerprints));
              return {};
            }};
  }
  return {files_->count, [f = files_](const auto& block) -> status {
            for (const files::segment& seg : f->segments)
              if (auto st = scan_segment(seg.path, seg.offset, seg.count, block); !st) return st;
            return {};
          }};
}

status fingerprint_list::append_spilled_id(std::string& out, std::size_t i) const {
  if (!files_->text_ids) {
    json::append_uint(out, i);
    return {};
  }
  auto read_at = [](int fd, void* p, std::size_t n, uint64_t at) {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r =
          ::pread(fd, static_cast<char*>(p) + got, n - got, static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  };
  uint64_t ends[2] = {0, 0};
  const bool ok = i == 0 ? read_at(files_->ends_fd, &ends[1], 8, 0)
                         : read_at(files_->ends_fd, ends, 16, (i - 1) * 8);
  std::string id(ok ? ends[1] - ends[0] : 0, '\0');
  if (!ok || !read_at(files_->ids_fd, id.data(), id.size(), ends[0]))
    return make_error(errc::io_error, "reading spilled id " + std::to_string(i) + " from " +
                                          files_->dir + ": " + std::strerror(errno));
  out += id;
  return {};
}

}  // namespace simdup
