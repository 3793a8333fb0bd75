// Key and value encodings of the embedded RocksDB store (rocks_backend.cpp).
//
// Documents are stored a request at a time: a record holds documents one request inserted (up to
// about 32 KB of them; a larger request writes several), so a batch of 100 costs RocksDB a few
// keys instead of hundreds (the ids are mapped to numbers in memory, store/id_map.hpp). Keys
// (numbers big endian so they sort); the n/ keys are in column family "num", the t/ keys in "time"
// (both only grow, so RocksDB moves their files instead of compacting them), all others in the
// default family:
//   c \0 <collection>                   -> collection settings (JSON)
//   n \0 <collection> \0 <number>        -> record: documents of one request, numbered from
//                                          <number> on (encode_record); rewritten without a
//                                          document that is deleted or replaced
//   t \0 <collection> \0 <time><number>  -> empty: a record's newest document time, for expiry
//                                          in time order
//   k \0 <collection>                   -> next document number (8 bytes, little endian): never
//                                          reused, even after the documents holding it are gone
//   r \0 <collection> \0 <removal>       -> number of a document removed by DELETE or replaced,
//                                          kept until a segment file covers the removal
//   s \0 <collection>                   -> segment file record (snapshot_record)
//   m \0 <collection>                   -> totals: inserted, expired, deleted (8 bytes each,
//                                          little endian), written with every change; optional
//                                          (stores written before it start them at 0), so the
//                                          format stays 4
//   f                                   -> format_version ("6"; a "4" or "5" store opens and
//                                          is marked "6" at once: its records read the same)
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail::rocks_keys {

inline constexpr const char* format_key = "f";
/// Bumped when a key or value encoding changes; a store of another format is refused, except
/// upgradable_formats, whose records this build reads as they are (format 5 added the optional
/// sketch of a document, format 6 its optional MinHash band keys, which older builds would
/// misread: hence the bumps).
inline constexpr const char* format_version = "6";
inline constexpr const char* upgradable_formats[] = {"4", "5"};
/// Column families of the n/ and t/ keys.
inline constexpr std::string_view num_family = "num";
inline constexpr std::string_view time_family = "time";

inline std::string prefix(char tag, std::string_view collection) {
  std::string k;
  k.reserve(2 + collection.size() + 17);
  k.push_back(tag);
  k.push_back('\0');
  k.append(collection);
  k.push_back('\0');
  return k;
}

/// Keys of one per collection (c, k, s): the tag, \0, the name.
inline std::string single(char tag, std::string_view collection) {
  std::string k;
  k.push_back(tag);
  k.push_back('\0');
  k.append(collection);
  return k;
}

inline void append_be(std::string& k, uint64_t v) {
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint64_t read_be(std::string_view s) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

inline void append_le(std::string& s, uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  s.append(buf, 8);
}

inline uint64_t read_le(std::string_view s) {
  uint64_t v;
  std::memcpy(&v, s.data(), 8);
  return v;
}

/// An 8-byte little-endian number: the k/ and r/ values.
inline std::string u64_value(uint64_t v) {
  std::string s;
  append_le(s, v);
  return s;
}

inline std::string num_key(std::string_view collection, uint64_t num) {
  std::string k = prefix('n', collection);
  append_be(k, num);
  return k;
}

/// Times are signed: the sign bit is flipped so that byte order is numeric order.
inline constexpr uint64_t time_bias = uint64_t{1} << 63;

inline std::string time_key(std::string_view collection, int64_t time, uint64_t num) {
  std::string k = prefix('t', collection);
  append_be(k, static_cast<uint64_t>(time) ^ time_bias);
  append_be(k, num);
  return k;
}

/// Key of a collection's next document number.
inline std::string next_number_key(std::string_view collection) {
  return single('k', collection);
}

inline std::string removal_key(std::string_view collection, uint64_t removal) {
  std::string k = prefix('r', collection);
  append_be(k, removal);
  return k;
}

/// Tags of the keys one per collection (single()) and of the keys under a prefix (prefix()).
inline constexpr char single_tags[] = {'c', 'k', 's', 'm'};
inline constexpr char prefixed_default_tags[] = {'r'};

/// The collection's totals (the m/ key).
struct totals {
  uint64_t inserted = 0, expired = 0, deleted = 0;
};

inline std::string totals_key(std::string_view collection) {
  return single('m', collection);
}

inline std::string encode(const totals& t) {
  std::string out;
  append_le(out, t.inserted);
  append_le(out, t.expired);
  append_le(out, t.deleted);
  return out;
}

inline bool decode(std::string_view s, totals& t) {
  if (s.size() != 24) return false;
  t.inserted = read_le(s);
  t.expired = read_le(s.substr(8));
  t.deleted = read_le(s.substr(16));
  return true;
}

/// The first key after every key that starts with `p` (p is never all 0xff bytes here).
inline std::string prefix_end(std::string p) {
  while (!p.empty() && static_cast<unsigned char>(p.back()) == 0xff) p.pop_back();
  if (!p.empty()) p.back() = static_cast<char>(static_cast<unsigned char>(p.back()) + 1);
  return p;
}

/// A document of a record. `id` and `sketch` point into the record's value (or its owner).
struct stored_doc {
  uint64_t num = 0;
  uint64_t fingerprint = 0;
  int64_t time = 0;
  std::string_view id;
  /// The verification sketch (collection_config::sketch) as 4-byte little-endian hashes;
  /// empty when the document has none (sent as a fingerprint, or to a collection that does not
  /// verify, or stored by format 4).
  std::string_view sketch;
  /// The MinHash band keys as 8-byte little-endian values; empty when the document has none
  /// (no sketch, a collection without bands, or stored before format 6).
  std::string_view band_keys;
};

/// Set in a document's id length when a sketch follows the id (ids are at most 1024 bytes).
inline constexpr uint32_t has_sketch_flag = uint32_t{1} << 31;
/// Set in a document's id length when band keys follow the sketch.
inline constexpr uint32_t has_bands_flag = uint32_t{1} << 30;

/// Record value: per document, number, fingerprint, time (8 bytes each, little endian), the id's
/// length (4 bytes, little endian; has_sketch_flag set when a sketch follows, has_bands_flag
/// when band keys do) and the id; then, with the flags, the sketch's hash count (2 bytes, little
/// endian) and its hashes (4 bytes each, little endian), and the band key count (1 byte) and
/// the keys (8 bytes each, little endian). Format 4 records are the same without sketches,
/// format 5 ones without band keys.
inline void append_doc(std::string& record, const stored_doc& d) {
  append_le(record, d.num);
  append_le(record, d.fingerprint);
  append_le(record, static_cast<uint64_t>(d.time));
  const auto n = static_cast<uint32_t>(d.id.size()) | (d.sketch.empty() ? 0 : has_sketch_flag) |
                 (d.band_keys.empty() ? 0 : has_bands_flag);
  char len[4];
  std::memcpy(len, &n, 4);
  record.append(len, 4).append(d.id);
  if (!d.sketch.empty()) {
    const auto count = static_cast<uint16_t>(d.sketch.size() / 4);
    char c[2];
    std::memcpy(c, &count, 2);
    record.append(c, 2).append(d.sketch);
  }
  if (!d.band_keys.empty()) {
    record.push_back(static_cast<char>(d.band_keys.size() / 8));
    record.append(d.band_keys);
  }
}

static_assert(std::endian::native == std::endian::little,
              "sketches and band keys are stored little endian, as the host holds them");
/// The stored form of a sketch or of band keys (stored_doc::sketch, stored_doc::band_keys):
/// the values' own bytes, in place.
template <class T>
std::string_view stored_bytes(std::span<const T> values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}
/// Replaces `out` with stored band keys.
inline void decode_band_keys(std::string_view keys, std::vector<uint64_t>& out) {
  out.resize(keys.size() / 8);
  if (!out.empty()) std::memcpy(out.data(), keys.data(), out.size() * 8);
}
/// Replaces `out` with the hashes of a stored sketch.
inline void decode_sketch(std::string_view sketch, std::vector<uint32_t>& out) {
  out.resize(sketch.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), sketch.data(), out.size() * 4);
}

/// The documents of a record, pointing into `record`; false when it is malformed.
inline bool decode_record(std::string_view record, std::vector<stored_doc>& out) {
  out.clear();
  while (!record.empty()) {
    if (record.size() < 28) return false;
    stored_doc d;
    d.num = read_le(record);
    d.fingerprint = read_le(record.substr(8));
    d.time = static_cast<int64_t>(read_le(record.substr(16)));
    uint32_t n;
    std::memcpy(&n, record.data() + 24, 4);
    const bool sketch = (n & has_sketch_flag) != 0;
    const bool bands = (n & has_bands_flag) != 0;
    n &= ~(has_sketch_flag | has_bands_flag);
    if (record.size() - 28 < n) return false;
    d.id = record.substr(28, n);
    record.remove_prefix(28 + std::size_t{n});
    if (sketch) {
      if (record.size() < 2) return false;
      uint16_t count;
      std::memcpy(&count, record.data(), 2);
      if (record.size() - 2 < std::size_t{count} * 4) return false;
      d.sketch = record.substr(2, std::size_t{count} * 4);
      record.remove_prefix(2 + std::size_t{count} * 4);
    }
    if (bands) {
      if (record.empty()) return false;
      const std::size_t count = static_cast<unsigned char>(record[0]);
      if (count == 0 || record.size() - 1 < count * 8) return false;
      d.band_keys = record.substr(1, count * 8);
      record.remove_prefix(1 + count * 8);
    }
    out.push_back(d);
  }
  return true;
}

/// Which documents a segment file holds: every one numbered below next_num (minus removals
/// numbered below removal), none numbered from end_num on, and maybe some in between (inserted
/// while it was saved); file_size guards against a stale file.
struct snapshot_record {
  uint64_t next_num = 0;
  uint64_t end_num = 0;
  uint64_t removal = 0;
  uint64_t file_size = 0;
  std::string file;  ///< name inside the segments directory
};

inline std::string encode(const snapshot_record& r) {
  std::string out;
  append_le(out, r.next_num);
  append_le(out, r.end_num);
  append_le(out, r.removal);
  append_le(out, r.file_size);
  return out.append(r.file);
}

inline bool decode(std::string_view s, snapshot_record& r) {
  if (s.size() < 33) return false;
  r.next_num = read_le(s);
  r.end_num = read_le(s.substr(8));
  r.removal = read_le(s.substr(16));
  r.file_size = read_le(s.substr(24));
  r.file = std::string(s.substr(32));
  return r.file.find('/') == std::string::npos;
}

}  // namespace simdup::detail::rocks_keys
