// Loads jieba.bin (written by scripts/prepare_jieba.py; format in docs/chinese.md).
#include "jieba/segmenter_impl.hpp"
#include "jieba/utf8.hpp"

#include <zlib.h>

#include <cstring>
#include <fstream>

namespace simdup {

namespace {

constexpr char magic[8] = {'S', 'I', 'M', 'D', 'U', 'P', 'J', 'B'};
constexpr uint32_t format_version = 1;
constexpr std::size_t header_size = 8 + 4 + 4 + 8;

// Little-endian reader over the payload that reports truncation instead of reading past it.
class reader {
 public:
  explicit reader(std::string_view data) : data_(data) {}
  template <class T>
  bool get(T& v) {
    if (data_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool bytes(std::size_t n, std::string_view& v) {
    if (data_.size() - pos_ < n) return false;
    v = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == data_.size(); }
  std::size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

bool valid_utf8(std::string_view s) {
  for (std::size_t p = 0; p < s.size();) {
    const detail::decoded_char c = detail::decode_utf8(s, p);
    if (c.cp == detail::invalid_code_point) return false;
    p += c.len;
  }
  return true;
}

}  // namespace

status jieba_segmenter::impl::load(const std::string& path) {
  static_assert(std::endian::native == std::endian::little, "jieba.bin is little-endian");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(
        errc::not_found,
        "jieba dictionary " + path + " not found (run scripts/prepare_jieba.py or make deps)");
  }
  std::string data;
  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (file_size > 0) {
    data.resize(static_cast<std::size_t>(file_size));
    in.read(data.data(), file_size);
  }
  if (!in) return make_error(errc::io_error, "cannot read jieba dictionary " + path);
  auto corrupt = [&](const std::string& why) {
    return make_error(errc::corrupt_data,
                      "jieba dictionary " + path + " is corrupt: " + why +
                          " (rebuild it with scripts/prepare_jieba.py --force)");
  };
  if (data.size() < header_size || std::memcmp(data.data(), magic, sizeof magic) != 0) {
    return corrupt("not a simdup jieba file");
  }
  uint32_t version = 0, crc = 0;
  uint64_t size = 0;
  std::memcpy(&version, data.data() + 8, 4);
  std::memcpy(&crc, data.data() + 12, 4);
  std::memcpy(&size, data.data() + 16, 8);
  if (version != format_version) return corrupt("unsupported version " + std::to_string(version));
  if (size != data.size() - header_size) return corrupt("truncated or padded");
  const std::string_view payload = std::string_view(data).substr(header_size);
  uLong actual = crc32(0L, Z_NULL, 0);
  for (std::size_t off = 0; off < payload.size(); off += 1u << 30) {  // crc32 takes a uInt
    const std::size_t n = std::min<std::size_t>(payload.size() - off, 1u << 30);
    actual =
        crc32(actual, reinterpret_cast<const Bytef*>(payload.data() + off), static_cast<uInt>(n));
  }
  if (actual != crc) return corrupt("checksum mismatch");

  reader r(payload);
  uint32_t count = 0;
  if (!r.get(total) || !r.get(count)) return corrupt("truncated header");
  if (total == 0 || count == 0) return corrupt("empty dictionary");
  // Each word takes at least 9 bytes (frequency, offset, one byte of text): a larger count is
  // a damaged file, refused before sizing the tables by it (up to 32 GiB for 2^32 words).
  if (count > r.remaining() / 9) return corrupt("word count larger than the file");
  std::vector<uint64_t> freqs(count);
  for (auto& f : freqs) {
    uint32_t v = 0;
    if (!r.get(v)) return corrupt("truncated frequencies");
    f = v;
  }
  std::vector<uint32_t> offsets(std::size_t{count} + 1);
  for (auto& o : offsets)
    if (!r.get(o)) return corrupt("truncated word offsets");
  std::string_view blob;
  if (!r.bytes(offsets.back(), blob)) return corrupt("truncated words");
  std::vector<std::string_view> words(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (offsets[i] >= offsets[i + 1] || offsets[i + 1] > blob.size())
      return corrupt("bad word offsets");
    words[i] = blob.substr(offsets[i], offsets[i + 1] - offsets[i]);
    if (i > 0 && !(words[i - 1] < words[i])) return corrupt("words not sorted");
    if (!valid_utf8(words[i])) return corrupt("invalid UTF-8 in word " + std::to_string(i));
  }
  for (auto& s : hmm.start)
    if (!r.get(s)) return corrupt("truncated HMM");
  for (auto& row : hmm.trans)
    for (auto& t : row)
      if (!r.get(t)) return corrupt("truncated HMM");
  uint32_t emits = 0;
  if (!r.get(emits)) return corrupt("truncated HMM");
  hmm.emit.assign(4, detail::hmm_min_float);
  hmm.emit_row.reset(new uint16_t[detail::hmm_last_char - detail::hmm_first_char + 1]());
  for (uint32_t i = 0; i < emits; ++i) {
    uint32_t cp = 0;
    double e[4];
    if (!r.get(cp) || !r.get(e[0]) || !r.get(e[1]) || !r.get(e[2]) || !r.get(e[3])) {
      return corrupt("truncated HMM emissions");
    }
    if (!detail::hmm_char(cp)) continue;  // jieba's HMM never sees other characters
    uint16_t& row = hmm.emit_row[cp - detail::hmm_first_char];
    if (row == 0) {  // a later entry for the same character replaces the earlier one
      row = static_cast<uint16_t>(hmm.emit.size() / 4);
      hmm.emit.resize(hmm.emit.size() + 4);
    }
    std::memcpy(&hmm.emit[std::size_t{row} * 4], e, sizeof e);
  }
  if (!r.done()) return corrupt("trailing bytes");
  trie.build(words, freqs);
  log_total = std::log(static_cast<double>(total));
  return {};
}

}  // namespace simdup
