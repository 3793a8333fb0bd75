// The online index file, version 3 (reads versions 1 and 2): a 64-byte header, the level-1 block
// widths, then each sealed segment's word block and deletion bitmap, then an XXH3-64 checksum.
// Little-endian; every part starts at a multiple of 8 bytes so a mapping can be used in place.
#include "index/index_file.hpp"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

namespace simdup::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the index file format is little-endian; add byte swapping for this platform");

constexpr char magic[8] = {'S', 'I', 'M', 'D', 'U', 'P', 'I', 'X'};
constexpr std::size_t header_bytes = 64;

struct file_header {
  char magic[8];
  uint32_t version;
  uint32_t k;
  uint32_t level1_blocks;
  uint32_t level2_blocks;
  uint32_t tables;
  uint32_t reserved0;
  uint64_t segments;
  uint64_t expired;
  uint64_t removed;
  uint64_t reserved1;
};
static_assert(sizeof(file_header) == header_bytes);

std::size_t widths_bytes(std::size_t m1) {
  return (m1 + 7) / 8 * 8;
}

struct mapping {
  void* addr = nullptr;
  std::size_t size = 0;
  mapping() = default;
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  ~mapping() {
    if (addr) munmap(addr, size);
  }
};

class file_writer {
 public:
  explicit file_writer(std::FILE* f) : f_(f), state_(XXH3_createState(), &XXH3_freeState) {
    ok_ = state_ != nullptr && XXH3_64bits_reset(state_.get()) == XXH_OK;
  }
  void write(const void* data, std::size_t bytes) {
    if (!ok_ || bytes == 0) return;
    XXH3_64bits_update(state_.get(), data, bytes);
    put(data, bytes);
  }
  /// The checksum, then flushes and closes the file.
  void finish() {
    if (ok_) {
      const uint64_t sum = XXH3_64bits_digest(state_.get());
      put(&sum, 8);
    }
    if (std::fclose(f_) != 0 && ok_) fail();
  }
  bool ok() const { return ok_; }
  /// Why a write failed (a full disk: "No space left on device").
  const char* why() const { return std::strerror(errno_); }

 private:
  void put(const void* data, std::size_t bytes) {
    if (std::fwrite(data, 1, bytes, f_) != bytes) fail();
  }
  void fail() {
    ok_ = false;
    errno_ = errno;
  }
  std::FILE* f_;
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
  bool ok_ = true;
  int errno_ = 0;
};

}  // namespace

status write_index_file(const std::string& path, const index_layout& layout,
                        const std::vector<std::shared_ptr<sealed_segment>>& segments,
                        uint64_t expired, uint64_t removed) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return make_error(errc::io_error, tmp + ": " + std::strerror(errno));
  file_writer w(f);
  file_header h{};
  std::memcpy(h.magic, magic, sizeof magic);
  h.version = index_file_version;
  h.k = static_cast<uint32_t>(layout.k);
  h.level1_blocks = static_cast<uint32_t>(layout.widths.size());
  h.level2_blocks = static_cast<uint32_t>(layout.second_level_blocks);
  h.tables = static_cast<uint32_t>(layout.table_count());
  h.segments = segments.size();
  h.expired = expired;
  h.removed = removed;
  w.write(&h, sizeof h);
  std::vector<uint8_t> widths(widths_bytes(layout.widths.size()), 0);
  for (std::size_t i = 0; i < layout.widths.size(); ++i)
    widths[i] = static_cast<uint8_t>(layout.widths[i]);
  w.write(widths.data(), widths.size());
  for (const auto& s : segments) {
    const uint64_t sizes[2] = {s->words().size(), s->deleted().size()};
    w.write(sizes, sizeof sizes);
    w.write(s->words().data(), s->words().size() * 8);
    w.write(s->deleted().data(), s->deleted().size() * 8);
  }
  w.finish();
  if (!w.ok()) {
    std::remove(tmp.c_str());
    return make_error(errc::io_error, "cannot write " + tmp + ": " + w.why());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return make_error(errc::io_error, path + ": " + why);
  }
  return {};
}

result<index_file> read_index_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(errno == ENOENT ? errc::not_found : errc::io_error,
                      path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return make_error(errc::io_error, path + ": " + std::strerror(errno));
  }
  auto corrupt = [&](const std::string& why) {
    return make_error(errc::corrupt_data, path + ": not a valid simdup index file (" + why + ")");
  };
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < header_bytes + 8 || size % 8 != 0) {
    ::close(fd);
    return corrupt("size");
  }
  auto map = std::make_shared<mapping>();
  map->addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map->addr == MAP_FAILED) {
    map->addr = nullptr;
    return make_error(errc::io_error, path + ": mmap: " + std::strerror(errno));
  }
  map->size = size;
  const auto* bytes = static_cast<const unsigned char*>(map->addr);
  file_header h;
  std::memcpy(&h, bytes, sizeof h);
  if (std::memcmp(h.magic, magic, sizeof magic) != 0) return corrupt("magic");
  if (h.version > index_file_version)
    return make_error(errc::unsupported, path + ": index file version " +
                                             std::to_string(h.version) +
                                             " is newer than this build reads (" +
                                             std::to_string(index_file_version) + ")");
  if (h.version == 0) return corrupt("version 0");
  uint64_t stored_sum;
  std::memcpy(&stored_sum, bytes + size - 8, 8);
  if (XXH3_64bits(bytes, size - 8) != stored_sum) return corrupt("checksum");

  index_file out;
  out.owner = map;
  out.expired = h.expired;
  out.removed = h.removed;
  if (h.level1_blocks == 0 || h.level1_blocks > 64 || h.k > max_index_k) return corrupt("layout");
  std::size_t pos = header_bytes;
  const std::size_t wb = widths_bytes(h.level1_blocks);
  if (pos + wb > size - 8) return corrupt("truncated widths");
  out.layout.k = static_cast<int>(h.k);
  for (uint32_t i = 0; i < h.level1_blocks; ++i) out.layout.widths.push_back(bytes[pos + i]);
  out.layout.second_level_blocks = static_cast<int>(h.level2_blocks);
  pos += wb;
  if (!out.layout.validate() || out.layout.table_count() != h.tables) return corrupt("layout");
  const auto* words = reinterpret_cast<const uint64_t*>(bytes);
  const std::size_t end_word = (size - 8) / 8;
  std::size_t wpos = pos / 8;
  for (uint64_t s = 0; s < h.segments; ++s) {
    if (wpos + 2 > end_word) return corrupt("truncated segment header");
    const uint64_t nw = words[wpos], nd = words[wpos + 1];
    wpos += 2;
    if (nw > end_word - wpos || nd > end_word - wpos - nw) return corrupt("truncated segment");
    // Version 1 predates filter bits: its segments are all old-form (header word 5 zero).
    if (h.version == 1 && nw >= segment_header_words && words[wpos + 5] != 0)
      return corrupt("version 1 segment with filter bits");
    // Segment header word 6 names the block form: 0 before version 3, 3 from version 3 on.
    const uint64_t form = h.version < 3 ? 0 : segment_form;
    if (nw >= segment_header_words && words[wpos + 6] != form)
      return corrupt("segment form " + std::to_string(words[wpos + 6]) + " in a version " +
                     std::to_string(h.version) + " file");
    file_segment seg;
    seg.words = std::span<const uint64_t>(words + wpos, nw);
    seg.deleted.assign(words + wpos + nw, words + wpos + nw + nd);
    wpos += nw + nd;
    out.segments.push_back(std::move(seg));
  }
  if (wpos != end_word) return corrupt("trailing bytes");
  return out;
}

}  // namespace simdup::detail
