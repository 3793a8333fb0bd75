#include "io/line_input.hpp"

#include <algorithm>
#include <cstring>

namespace simdup::detail {
namespace {
constexpr std::size_t kChunk = std::size_t{1} << 18;  // decompressed bytes per read, at full size
}  // namespace

line_input::line_input(std::unique_ptr<byte_source> source, std::size_t max_record)
    : source_(std::move(source)),
      max_record_(max_record),
      chunk_(kFirstReadChunk),
      buf_(chunk_ + kLinePadding) {
  zero_padding();
}

void line_input::zero_padding() {
  std::memset(buf_.data() + buf_.size() - kLinePadding, 0, kLinePadding);
}

void line_input::compact() {
  if (begin_ == 0) return;
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  consumed_ += begin_;
  end_ -= begin_;
  begin_ = 0;
}

result<bool> line_input::fill() {
  if (eof_) return false;
  compact();
  const std::size_t capacity = buf_.size() - kLinePadding;
  if (capacity - end_ < chunk_ / 2) {
    // Doubling keeps a huge line linear in time; the padding stays zeroed past the data.
    buf_.resize(std::max(2 * capacity, end_ + chunk_) + kLinePadding);
    zero_padding();
  }
  auto got = source_->read(buf_.data() + end_, buf_.size() - kLinePadding - end_);
  if (!got) return std::move(got).error();
  chunk_ = std::min(2 * chunk_, kChunk);
  if (*got == 0) {
    eof_ = true;
    return false;
  }
  end_ += *got;
  return true;
}

line_status line_input::next_line(std::string_view& line, error_info& error) {
  if (!bom_checked_) {
    auto head = peek(3);
    if (!head) {
      error = std::move(head).error();
      return line_status::error;
    }
  }
  std::size_t scan = begin_;
  for (;;) {
    const void* nl = std::memchr(buf_.data() + scan, '\n', end_ - scan);
    if (nl != nullptr) {
      const std::size_t pos = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
      std::size_t stop = pos;
      terminator_ = "\n";
      if (stop > begin_ && buf_[stop - 1] == '\r') {
        --stop;
        terminator_ = "\r\n";
      }
      line = std::string_view(buf_.data() + begin_, stop - begin_);
      line_offset_ = consumed_ + begin_;
      ++line_number_;
      begin_ = pos + 1;
      if (line.size() > max_record_) return line_status::too_long;
      return line_status::ok;
    }
    if (end_ - begin_ > max_record_) {
      // Skip the rest of the over-long line without buffering it.
      const auto quotes = [&](std::size_t from, std::size_t to) {
        return static_cast<uint64_t>(std::count(buf_.data() + from, buf_.data() + to, '"'));
      };
      line_offset_ = consumed_ + begin_;
      ++line_number_;
      skipped_quotes_ = quotes(begin_, end_);
      consumed_ += end_;
      begin_ = end_ = 0;
      for (;;) {
        auto more = fill();
        if (!more) {
          error = std::move(more).error();
          return line_status::error;
        }
        if (!*more) break;
        const void* found = std::memchr(buf_.data(), '\n', end_);
        if (found != nullptr) {
          begin_ = static_cast<std::size_t>(static_cast<const char*>(found) - buf_.data()) + 1;
          skipped_quotes_ += quotes(0, begin_);
          break;
        }
        skipped_quotes_ += quotes(0, end_);
        consumed_ += end_;
        end_ = 0;
      }
      return line_status::too_long;
    }
    const std::size_t scanned = end_ - begin_;
    auto more = fill();
    if (!more) {
      error = std::move(more).error();
      return line_status::error;
    }
    scan = begin_ + scanned;
    if (!*more) {
      if (begin_ == end_) return line_status::end;
      line = std::string_view(buf_.data() + begin_, end_ - begin_);
      terminator_ = "";
      line_offset_ = consumed_ + begin_;
      ++line_number_;
      begin_ = end_;
      return line_status::ok;
    }
  }
}

result<bool> line_input::read_exact(std::size_t n, std::string* out) {
  while (n > 0) {
    if (begin_ == end_) {
      auto more = fill();
      if (!more) return std::move(more).error();
      if (!*more) return false;
    }
    const std::size_t take = std::min(n, end_ - begin_);
    if (out != nullptr) out->append(buf_.data() + begin_, take);
    begin_ += take;
    n -= take;
  }
  return true;
}

result<std::string_view> line_input::peek(std::size_t n) {
  while (end_ - begin_ < std::max<std::size_t>(n, 3) && !eof_) {
    auto more = fill();
    if (!more) return std::move(more).error();
  }
  if (!bom_checked_) {
    bom_checked_ = true;
    if (end_ - begin_ >= 3 && std::memcmp(buf_.data() + begin_, "\xEF\xBB\xBF", 3) == 0) {
      begin_ += 3;
    }
  }
  return std::string_view(buf_.data() + begin_, std::min(n, end_ - begin_));
}

}  // namespace simdup::detail
