#include "dedup/output_dir.hpp"

#include <cerrno>
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

}  // namespace

result<output_dir> output_dir::create(const fs::path& final_path) {
  std::error_code ec;
  const fs::path target = final_path.lexically_normal();
  const auto st = fs::status(target, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) {
      return make_error(errc::invalid_argument, "--out " + target.string() + " is not a directory");
    }
    if (!fs::is_empty(target, ec) && !fs::exists(target / "summary.json", ec)) {
      return make_error(errc::invalid_argument,
                        "--out " + target.string() +
                            " exists and is not an earlier simdup dedup result (no summary.json); "
                            "refusing to replace it");
    }
  }
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec) return io_error("cannot create", parent, ec);
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path temp = target;
    temp += ".tmp-" + random_suffix();
    if (fs::create_directory(temp, ec)) return output_dir(target, temp);
    if (ec) return io_error("cannot create", temp, ec);
  }
  return make_error(errc::io_error,
                    "cannot create a temporary directory next to " + target.string());
}

status output_dir::commit() {
  std::error_code ec;
  fs::path old;
  if (fs::exists(final_, ec)) {
    old = final_;
    old += ".old-" + random_suffix();
    fs::rename(final_, old, ec);
    if (ec) return io_error("cannot move aside", final_, ec);
  }
  fs::rename(temp_, final_, ec);
  if (ec) {
    std::error_code ignored;
    if (!old.empty()) fs::rename(old, final_, ignored);
    return io_error("cannot move the result into", final_, ec);
  }
  done_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
  return {};
}

output_dir::output_dir(output_dir&& other) noexcept
    : final_(std::move(other.final_)), temp_(std::move(other.temp_)), done_(other.done_) {
  other.done_ = true;
}

output_dir::~output_dir() {
  if (done_ || temp_.empty()) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);
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
