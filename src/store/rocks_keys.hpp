// Key and value encodings of the embedded RocksDB store (rocks_backend.cpp).
//
// Keys (numbers big endian so they sort); the n/ keys are in column family "num", the t/ keys in
// "time" (their keys only grow, so RocksDB moves their files instead of compacting them), all
// others in the default family:
//   c \0 <collection>                   -> collection settings (JSON)
//   d \0 <collection> \0 <id>           -> fingerprint, time, number (3 x 8 bytes, little endian)
//   n \0 <collection> \0 <number>       -> fingerprint, time (2 x 8 bytes, little endian) + id;
//                                          number order, for the replay after a segment file
//   t \0 <collection> \0 <time><number> -> fingerprint (8 bytes, little endian) + id; time order
//                                          for the rebuild and for expiry
//   k \0 <collection>                   -> documents in the collection (8 bytes, little endian)
//   r \0 <collection> \0 <removal>      -> number of a document removed by DELETE or replaced,
//                                          kept until a segment file covers the removal
//   s \0 <collection>                   -> segment file record (snapshot_record)
//   f                                   -> format_version
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace simdup::detail::rocks_keys {

inline constexpr const char* format_key = "f";
/// Bumped when a key or value encoding changes; a store of another format is refused.
inline constexpr const char* format_version = "3";
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

/// Key of the document count of a collection.
inline std::string count_key(std::string_view collection) {
  return single('k', collection);
}

inline std::string doc_key(std::string_view collection, std::string_view id) {
  return prefix('d', collection).append(id);
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

inline std::string time_value(uint64_t fingerprint, std::string_view id) {
  std::string v;
  v.reserve(8 + id.size());
  append_le(v, fingerprint);
  v.append(id);
  return v;
}

inline std::string num_value(uint64_t fingerprint, int64_t time, std::string_view id) {
  std::string v;
  v.reserve(16 + id.size());
  append_le(v, fingerprint);
  append_le(v, static_cast<uint64_t>(time));
  v.append(id);
  return v;
}

inline std::string removal_key(std::string_view collection, uint64_t removal) {
  std::string k = prefix('r', collection);
  append_be(k, removal);
  return k;
}

struct doc_value {
  uint64_t fingerprint = 0;
  int64_t time = 0;
  uint64_t num = 0;
};

inline std::string encode(const doc_value& v) {
  std::string out;
  out.reserve(24);
  append_le(out, v.fingerprint);
  append_le(out, static_cast<uint64_t>(v.time));
  append_le(out, v.num);
  return out;
}

inline bool decode(std::string_view s, doc_value& v) {
  if (s.size() != 24) return false;
  v.fingerprint = read_le(s);
  v.time = static_cast<int64_t>(read_le(s.substr(8)));
  v.num = read_le(s.substr(16));
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
