#include "io/byte_source.hpp"

#include <zlib.h>
#include <zstd.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace simdup::detail {
namespace {

constexpr std::size_t kInputChunk = std::size_t{1} << 17;  // compressed bytes per read
constexpr int kCancelPollMs = 100;  // how soon a blocked pipe read notices a cancellation

/// The compressed bytes under a decompressor, read in chunks from kFirstReadChunk up to `max`.
class input_chunks {
 public:
  explicit input_chunks(std::size_t max) : max_(max) {}
  /// Reads the next chunk of `src` (the previous one is consumed); its bytes start at data().
  result<std::size_t> read(byte_source& src) {
    const std::size_t want = std::min(buf_.empty() ? kFirstReadChunk : 2 * buf_.size(), max_);
    if (want != buf_.size()) {
      buf_.clear();  // nothing to keep: the growth copies no bytes
      buf_.resize(want);
    }
    return src.read(buf_.data(), buf_.size());
  }
  char* data() noexcept { return buf_.data(); }

 private:
  std::size_t max_;
  read_buffer buf_;
};

/// A decompressor's error met after it had decoded bytes in the same read() call: those bytes
/// are returned first and the error on the next call, so the records before a corruption are
/// read (found: a corrupt gzip member right after a sound one lost the sound one's last 256 KiB).
/// Once failed, every later call fails the same way.
class held_error {
 public:
  /// What read() returns on `error` after decoding `decoded` bytes in this call.
  result<std::size_t> fail(std::size_t decoded, error_info error) {
    error_ = std::move(error);
    if (decoded != 0) return decoded;
    return *error_;
  }
  bool failed() const noexcept { return error_.has_value(); }
  const error_info& error() const { return *error_; }

 private:
  std::optional<error_info> error_;
};

/// A file descriptor (a file or stdin). Bytes already peeked at are served first.
class fd_source final : public byte_source {
 public:
  /// `cancel`: polled between reads (for pipes and terminals, which can block indefinitely).
  fd_source(int fd, bool owned, std::string name, uint64_t* counter,
            const std::atomic<bool>* cancel)
      : fd_(fd), owned_(owned), name_(std::move(name)), counter_(counter), cancel_(cancel) {}
  ~fd_source() override {
    if (owned_) ::close(fd_);
  }
  fd_source(const fd_source&) = delete;
  fd_source& operator=(const fd_source&) = delete;

  result<std::size_t> read(char* buffer, std::size_t size) override {
    if (pos_ < pending_.size()) {
      const std::size_t n = std::min(size, pending_.size() - pos_);
      std::memcpy(buffer, pending_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return read_fd(buffer, size);
  }

  /// Reads up to `n` bytes ahead without consuming them (fewer at end of stream).
  result<std::string> peek(std::size_t n) {
    while (pending_.size() < n) {
      char tmp[16];
      auto got = read_fd(tmp, std::min(sizeof tmp, n - pending_.size()));
      if (!got) return std::move(got).error();
      if (*got == 0) break;
      pending_.append(tmp, *got);
    }
    return pending_;
  }

 private:
  result<std::size_t> read_fd(char* buffer, std::size_t size) {
    auto n = detail::read_fd(fd_, buffer, size, name_, cancel_);
    if (n && counter_) *counter_ += *n;
    return n;
  }

  int fd_;
  bool owned_;
  std::string name_;
  uint64_t* counter_;
  const std::atomic<bool>* cancel_;
  std::string pending_;
  std::size_t pos_ = 0;
};

class memory_source final : public byte_source {
 public:
  memory_source(std::string data, uint64_t* counter) : data_(std::move(data)), counter_(counter) {}
  result<std::size_t> read(char* buffer, std::size_t size) override {
    const std::size_t n = std::min(size, data_.size() - pos_);
    std::memcpy(buffer, data_.data() + pos_, n);
    pos_ += n;
    if (counter_) *counter_ += n;
    return n;
  }

 private:
  std::string data_;
  std::size_t pos_ = 0;
  uint64_t* counter_;
};

/// gzip, including multi-member files (Common Crawl concatenates one member per record).
class gzip_source final : public byte_source {
 public:
  gzip_source(std::unique_ptr<byte_source> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(kInputChunk) {}
  ~gzip_source() override {
    if (initialised_) inflateEnd(&z_);
  }
  gzip_source(const gzip_source&) = delete;
  gzip_source& operator=(const gzip_source&) = delete;

  status init() {
    std::memset(&z_, 0, sizeof z_);
    // 15 + 16: gzip wrapper only (the magic bytes said gzip).
    if (inflateInit2(&z_, 15 + 16) != Z_OK) {
      return make_error(errc::internal, "zlib initialisation failed for " + name_);
    }
    initialised_ = true;
    return {};
  }

  result<std::size_t> read(char* buffer, std::size_t size) override {
    if (held_.failed()) return held_.error();
    if (done_ || size == 0) return std::size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(buffer);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    const auto decoded = [&] {
      return static_cast<std::size_t>(z_.next_out - reinterpret_cast<Bytef*>(buffer));
    };
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0 && !eof_) {
        auto got = in_.read(*inner_);
        if (!got) return held_.fail(decoded(), std::move(got).error());
        if (*got == 0) {
          eof_ = true;
        } else {
          z_.next_in = reinterpret_cast<Bytef*>(in_.data());
          z_.avail_in = static_cast<uInt>(*got);
        }
      }
      if (!member_started_) {
        // Zero bytes after a member are padding (tape blocks; gzip and Python's gzip skip them
        // too), up to the end of the input.
        while (z_.avail_in > 0 && *z_.next_in == 0) {
          ++z_.next_in;
          --z_.avail_in;
          padded_ = true;
        }
        if (z_.avail_in == 0 && !eof_) continue;
      }
      const bool drained = z_.avail_in == 0 && eof_;
      if (drained && !member_started_) {
        done_ = true;
        break;
      }
      if (padded_) {
        return held_.fail(decoded(), make_error(errc::corrupt_data,
                                                "corrupt gzip data in " + name_ +
                                                    ": data after the zero bytes that pad it"));
      }
      member_started_ = true;
      Bytef* const before = z_.next_out;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another member may follow; only the end of the input ends the stream.
        member_started_ = false;
        if (inflateReset(&z_) != Z_OK) {
          return held_.fail(decoded(),
                            make_error(errc::internal, "zlib reset failed for " + name_));
        }
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return held_.fail(decoded(),
                          make_error(errc::corrupt_data, "corrupt gzip data in " + name_ + ": " +
                                                             (z_.msg ? z_.msg : "inflate failed")));
      }
      if (drained && z_.next_out == before) {
        return held_.fail(decoded(), make_error(errc::io_error,
                                                "truncated gzip stream in " + name_ +
                                                    " (the file ends inside a compressed member)"));
      }
    }
    return static_cast<std::size_t>(z_.next_out - reinterpret_cast<Bytef*>(buffer));
  }

 private:
  std::unique_ptr<byte_source> inner_;
  std::string name_;
  input_chunks in_;
  z_stream z_{};
  bool initialised_ = false;
  bool eof_ = false;
  bool done_ = false;
  bool member_started_ = false;
  bool padded_ = false;  ///< zero bytes followed the last member
  held_error held_;
};

enum class compression { none, gzip, zstd };

compression sniff(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return compression::gzip;
  }
  if (head.size() < 4) return compression::none;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };
  if (byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f && byte(3) == 0xfd) {
    return compression::zstd;
  }
  // A skippable frame (magic 0x184D2A50 to 0x184D2A5F) may come first: pzstd writes one before
  // every frame, so its files start with one.
  if ((byte(0) & 0xf0) == 0x50 && byte(1) == 0x2a && byte(2) == 0x4d && byte(3) == 0x18) {
    return compression::zstd;
  }
  return compression::none;
}

/// zstd, any number of frames.
class zstd_source final : public byte_source {
 public:
  zstd_source(std::unique_ptr<byte_source> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(ZSTD_DStreamInSize()) {
    ctx_ = ZSTD_createDCtx();
  }
  ~zstd_source() override { ZSTD_freeDCtx(ctx_); }
  zstd_source(const zstd_source&) = delete;
  zstd_source& operator=(const zstd_source&) = delete;

  result<std::size_t> read(char* buffer, std::size_t size) override {
    if (ctx_ == nullptr) return make_error(errc::internal, "zstd initialisation failed");
    if (held_.failed()) return held_.error();
    ZSTD_outBuffer out{buffer, size, 0};
    while (out.pos < out.size) {
      if (input_.pos == input_.size && !eof_) {
        auto got = in_.read(*inner_);
        if (!got) return held_.fail(out.pos, std::move(got).error());
        if (*got == 0) eof_ = true;
        input_ = ZSTD_inBuffer{in_.data(), *got, 0};
      }
      const bool drained = input_.pos == input_.size && eof_;
      if (drained && frame_done_) break;
      const std::size_t before = out.pos;
      const std::size_t consumed_from = input_.pos;
      ZSTD_outBuffer step{buffer + out.pos, std::min(size - out.pos, kDecodeStep), 0};
      const std::size_t rc = ZSTD_decompressStream(ctx_, &step, &input_);
      if (ZSTD_isError(rc)) {
        // The failing call's output position is not to be trusted either way (libzstd 1.5.4
        // reported 4,096 bytes it never wrote; found by the fuzz campaign): drop the step.
        return held_.fail(
            out.pos, make_error(errc::corrupt_data,
                                "corrupt zstd data in " + name_ + ": " + ZSTD_getErrorName(rc)));
      }
      out.pos += step.pos;
      const std::size_t consumed = input_.pos - consumed_from;
      const bool magic_known = header_.size() >= 4;
      header_.append(in_.data() + consumed_from,
                     std::min(consumed, kMaxFrameHeader - header_.size()));
      // libzstd also decodes the legacy formats v0.5 to v0.7 after a first frame, with code that
      // fuzzing found wrong; simdup reads zstd frames and skippable frames only.
      if (!magic_known && header_.size() >= 4 && sniff(header_) != compression::zstd) {
        return held_.fail(
            before, make_error(errc::corrupt_data,
                               "corrupt zstd data in " + name_ +
                                   ": a frame of a legacy zstd format (v0.x), which is not read"));
      }
      frame_bytes_ += out.pos - before;
      frame_done_ = rc == 0;
      if (frame_done_) {
        if (auto st = check_frame_size(); !st) return held_.fail(out.pos, std::move(st).error());
      }
      if (drained && out.pos == before && !frame_done_) {
        return held_.fail(out.pos,
                          make_error(errc::io_error, "truncated zstd stream in " + name_ +
                                                         " (the file ends inside a frame)"));
      }
    }
    return out.pos;
  }

 private:
  std::unique_ptr<byte_source> inner_;
  std::string name_;
  input_chunks in_;
  // libzstd's streaming decoder ends a frame at an empty last block even when the frame's
  // header declares more content (found by the fuzz campaign: 10 bytes read as an empty file;
  // the zstd tool calls it corrupt), so each finished frame is checked against its header.
  static constexpr std::size_t kMaxFrameHeader = 18;  // ZSTD_FRAMEHEADERSIZE_MAX
  // What a ZSTD_decompressStream call that fails wrote is unknown: it may not count bytes it
  // wrote (a 1 MiB output buffer lost all 262,144 sound bytes before a corrupt block) or count
  // bytes it did not write. So the output is given in steps and a failing step is dropped: a
  // corruption costs at most one step of the bytes before it.
  static constexpr std::size_t kDecodeStep = std::size_t{4} << 10;

  // (A skippable frame declares 0: it decodes to nothing.)
  status check_frame_size() {
    const unsigned long long declared = ZSTD_getFrameContentSize(header_.data(), header_.size());
    const uint64_t decoded = std::exchange(frame_bytes_, 0);
    header_.clear();
    if (declared == ZSTD_CONTENTSIZE_UNKNOWN || declared == ZSTD_CONTENTSIZE_ERROR ||
        declared == decoded) {
      return {};
    }
    return make_error(errc::corrupt_data, "corrupt zstd data in " + name_ + ": a frame holds " +
                                              std::to_string(decoded) +
                                              " bytes where its header declares " +
                                              std::to_string(declared));
  }

  ZSTD_inBuffer input_{nullptr, 0, 0};
  ZSTD_DCtx* ctx_ = nullptr;
  bool eof_ = false;
  bool frame_done_ = true;
  std::string header_;        ///< the current frame's first bytes (up to kMaxFrameHeader)
  uint64_t frame_bytes_ = 0;  ///< decoded from the current frame
  held_error held_;
};

result<std::unique_ptr<byte_source>> wrap(std::unique_ptr<byte_source> src, compression kind,
                                          const std::string& name) {
  switch (kind) {
    case compression::gzip: {
      auto gz = std::make_unique<gzip_source>(std::move(src), name);
      if (auto st = gz->init(); !st) return std::move(st).error();
      return std::unique_ptr<byte_source>(std::move(gz));
    }
    case compression::zstd:
      return std::unique_ptr<byte_source>(std::make_unique<zstd_source>(std::move(src), name));
    case compression::none:
      break;
  }
  return src;
}

}  // namespace

result<std::size_t> read_fd(int fd, char* buffer, std::size_t size, const std::string& name,
                            const std::atomic<bool>* cancel) {
  for (;;) {
    if (cancel != nullptr) {
      if (cancel->load(std::memory_order_relaxed)) {
        return make_error(errc::io_error, "reading " + name + " interrupted");
      }
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, kCancelPollMs);
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    }
    const ssize_t n = ::read(fd, buffer, size);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    return make_error(errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
  }
}

result<std::unique_ptr<byte_source>> open_source(const std::string& path, const std::string& name,
                                                 uint64_t* raw_bytes,
                                                 const std::atomic<bool>* cancel) {
  std::unique_ptr<fd_source> src;
  int fd = STDIN_FILENO;
  const bool owned = path != "-";
  if (owned) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const errc code = errno == ENOENT ? errc::not_found : errc::io_error;
      return make_error(code, "cannot open " + path + ": " + std::strerror(errno));
    }
  }
  struct stat st {};
  const bool known = (owned || cancel != nullptr) && ::fstat(fd, &st) == 0;
  if (owned && known && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return make_error(errc::invalid_input, "cannot read " + path + ": it is a directory");
  }
  // Only pipes and terminals can block indefinitely; regular files need no polling.
  const std::atomic<bool>* poll_cancel = known && !S_ISREG(st.st_mode) ? cancel : nullptr;
  src = std::make_unique<fd_source>(fd, owned, name, raw_bytes, poll_cancel);
  auto head = src->peek(4);
  if (!head) return std::move(head).error();
  const compression kind = sniff(*head);
  return wrap(std::move(src), kind, name);
}

result<std::unique_ptr<byte_source>> open_memory_source(std::string data, const std::string& name,
                                                        uint64_t* raw_bytes) {
  const compression kind = sniff(std::string_view(data).substr(0, 4));
  return wrap(std::make_unique<memory_source>(std::move(data), raw_bytes), kind, name);
}

bool starts_compressed(std::string_view head) noexcept {
  return sniff(head) != compression::none;
}

const char* input_failure_reason(const error_info& error) noexcept {
  switch (error.code) {
    case errc::not_found:
      return "missing_file";
    case errc::invalid_input:
      return "not_a_file";
    case errc::corrupt_data:
      return "corrupt_input";
    case errc::unsupported:
      return "binary_input";  // reader.cpp: the input is not text
    default:
      break;
  }
  // The decompressors' own messages (above) are the only ones that start this way.
  if (error.message.starts_with("truncated ")) return "truncated_input";
  return "unreadable_input";
}

}  // namespace simdup::detail
