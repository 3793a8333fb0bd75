#include "dedup/record_column.hpp"

#include "util/temp_file.hpp"
#include "util/write_errc.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace simdup::detail {
namespace {

// Appends are written, and scans read, this many bytes at a time.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

std::string reason(int err) {
  return std::generic_category().message(err);
}

}  // namespace

record_column::record_column(std::size_t width, std::string what)
    : width_(std::max<std::size_t>(width, 1)), what_(std::move(what)) {}

record_column::record_column(record_column&& other) noexcept
    : width_(other.width_),
      what_(std::move(other.what_)),
      dir_(std::move(other.dir_)),
      fd_(std::exchange(other.fd_, -1)),
      count_(std::exchange(other.count_, 0)),
      flushed_(std::exchange(other.flushed_, 0)),
      written_(std::exchange(other.written_, 0)),
      memory_(std::move(other.memory_)),
      failure_(std::move(other.failure_)) {}

record_column& record_column::operator=(record_column&& other) noexcept {
  if (this != &other) {
    release();
    width_ = other.width_;
    what_ = std::move(other.what_);
    dir_ = std::move(other.dir_);
    fd_ = std::exchange(other.fd_, -1);
    count_ = std::exchange(other.count_, 0);
    flushed_ = std::exchange(other.flushed_, 0);
    written_ = std::exchange(other.written_, 0);
    memory_ = std::move(other.memory_);
    failure_ = std::move(other.failure_);
  }
  return *this;
}

record_column::~record_column() {
  release();
}

void record_column::release() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  count_ = 0;
  flushed_ = 0;
  std::vector<uint8_t>().swap(memory_);
}

status record_column::append(std::span<const uint8_t> record) {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  memory_.insert(memory_.end(), record.begin(),
                 record.begin() + static_cast<std::ptrdiff_t>(width_));
  ++count_;
  if (spilled() && memory_.size() >= kBlockBytes) return write_buffer();
  return {};
}

status record_column::spill(const std::string& dir) {
  if (spilled()) return {};
  fd_ = open_unlinked_temp(dir, "simdup-column", dir_);
  if (fd_ < 0) {
    return make_error(write_errc(errno), "cannot create the temporary file of " + what_ + " in " +
                                             dir_ + ": " + reason(errno) + " (set --tmp-dir)");
  }
  auto st = write_buffer();
  std::vector<uint8_t>().swap(memory_);
  memory_.reserve(kBlockBytes + width_);
  return st;
}

status record_column::write_buffer() {
  if (const int err = write_all(fd_, memory_.data(), memory_.size()); err != 0) {
    failure_ = "cannot write the temporary file of " + what_ + " in " + dir_ + ": " + reason(err) +
               " (" + std::to_string(memory_.size()) + " more bytes needed, " +
               std::to_string(flushed_) + " written so far; free space or set --tmp-dir)";
    return make_error(write_errc(err), failure_);
  }
  flushed_ += memory_.size();
  written_ += memory_.size();
  memory_.clear();
  return {};
}

status record_column::flush() {
  if (!failure_.empty()) return make_error(errc::io_error, failure_);
  return spilled() && !memory_.empty() ? write_buffer() : status{};
}

status record_column::read_at(uint64_t offset, uint8_t* into, std::size_t bytes) const {
  // Records from flushed_ on are still in memory (all of them when not spilled).
  const uint64_t on_file = offset < flushed_ ? std::min<uint64_t>(bytes, flushed_ - offset) : 0;
  if (on_file > 0) {
    if (const int err = read_all_at(fd_, into, on_file, offset); err != 0) {
      return make_error(errc::io_error, "cannot read back the temporary file of " + what_ + " in " +
                                            dir_ + ": " + reason(err));
    }
  }
  if (bytes > on_file) {
    std::memcpy(into + on_file, memory_.data() + (offset + on_file - flushed_), bytes - on_file);
  }
  return {};
}

status record_column::scan(
    const std::function<void(uint32_t first, std::span<const uint8_t>)>& block) const {
  const std::size_t per_block = std::max<std::size_t>(1, kBlockBytes / width_);
  std::vector<uint8_t> buffer(spilled() ? per_block * width_ : 0);
  for (uint64_t first = 0; first < count_; first += per_block) {
    const uint64_t offset = first * width_;
    const std::size_t bytes = std::min<uint64_t>(per_block, count_ - first) * width_;
    if (!spilled()) {
      block(static_cast<uint32_t>(first), std::span(memory_.data() + offset, bytes));
      continue;
    }
    if (auto st = read_at(offset, buffer.data(), bytes); !st) return st;
    block(static_cast<uint32_t>(first), std::span(buffer.data(), bytes));
  }
  return {};
}

status record_column::gather(std::span<const uint32_t> ordinals, std::vector<uint8_t>& out) const {
  out.resize(ordinals.size() * width_);
  for (std::size_t i = 0; i < ordinals.size();) {
    // A run of consecutive ordinals is one read.
    std::size_t end = i + 1;
    while (end < ordinals.size() && ordinals[end] == ordinals[end - 1] + 1 &&
           (end - i) * width_ < kBlockBytes) {
      ++end;
    }
    const uint64_t offset = uint64_t{ordinals[i]} * width_;
    const std::size_t bytes = (end - i) * width_;
    if (auto st = read_at(offset, out.data() + i * width_, bytes); !st) return st;
    i = end;
  }
  return {};
}

}  // namespace simdup::detail
