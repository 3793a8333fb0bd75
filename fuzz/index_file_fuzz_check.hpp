// What fuzz/index_file_fuzz.cpp checks on every input, shared with the replay test
// (tests/unit/index/index_file_fuzz_test.cpp) that runs without clang. The input is an online
// index file (docs/index-format.md), the format of `online_index::save` and of the service's
// segment files (DIR/segments): untrusted because it outlives the process (disk faults,
// truncation, other versions, tampering).
//
// The file is loaded as given and, when its checksum is wrong, once more with the checksum
// recomputed, so that mutations reach the segment checks behind it. A load either fails with
// errc::corrupt_data / unsupported and a message, or gives an index whose answers are right:
// every match is a live entry of the file (parsed here independently of the loader) at the
// distance reported, never one that is not there; a file as simdup wrote it (the seeds, in
// the replay test) answers every query completely, as brute force over its entries does. Batch and
// single queries agree, the size is the number of live entries, and removing an id removes
// exactly its entries. check_index_file() returns "" when all holds, else what broke.
#pragma once

#include <simdup/online_index.hpp>

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fuzz_memfile.hpp"

namespace simdup::fuzz {

struct file_entry {
  uint64_t fingerprint, id;
  int64_t timestamp;
};

/// The live (not deleted) entries of every segment, read straight from the bytes; nullopt when
/// the sizes do not add up.
inline std::optional<std::vector<file_entry>> parse_index_entries(std::string_view f) {
  const auto u64 = [&](std::size_t off) {
    uint64_t v;
    std::memcpy(&v, f.data() + off, 8);
    return v;
  };
  if (f.size() < 72 || f.size() % 8 != 0) return std::nullopt;
  uint32_t m1;
  std::memcpy(&m1, f.data() + 16, 4);
  const uint64_t segments = u64(32);
  std::size_t pos = 64 + (std::size_t{m1} + 7) / 8 * 8;
  const std::size_t end = f.size() - 8;  // the checksum
  std::vector<file_entry> live;
  for (uint64_t s = 0; s < segments; ++s) {
    if (pos + 16 > end) return std::nullopt;
    const uint64_t w = u64(pos), d = u64(pos + 8);
    pos += 16;
    if (w > (end - pos) / 8 || d > (end - pos - 8 * w) / 8 || w < 8) return std::nullopt;
    const std::size_t block = pos;
    const uint64_t n = u64(block);
    if (n > (w - 8) / 3 || d < (n + 63) / 64) return std::nullopt;
    const std::size_t bitmap = block + 8 * w;
    for (uint64_t i = 0; i < n; ++i) {
      if ((u64(bitmap + 8 * (i / 64)) >> (i % 64)) & 1) continue;
      live.push_back({u64(block + 8 * (8 + i)), u64(block + 8 * (8 + n + i)),
                      static_cast<int64_t>(u64(block + 8 * (8 + 2 * n + i)))});
    }
    pos = bitmap + 8 * d;
  }
  if (pos != end) return std::nullopt;
  return live;
}

/// Checks a loaded index against the entries of the file it came from. `complete`: the file is
/// as written, so every entry within k must be found.
inline std::string check_loaded(online_index& index, const std::vector<file_entry>& live,
                                bool complete) {
  if (index.stats().size != live.size())
    return "size " + std::to_string(index.stats().size) + ", the file has " +
           std::to_string(live.size()) + " live entries";
  const int k = index.layout().k;
  std::vector<uint64_t> queries = {0, ~uint64_t{0}, 0x5555555555555555u};
  for (std::size_t i = 0; i < live.size() && i < 64; i += 1 + live.size() / 8) {
    const uint64_t fp = live[i].fingerprint;
    queries.push_back(fp);
    queries.push_back(fp ^ (uint64_t{1} << (i % 64)));
    queries.push_back(fp ^ 0x0101010101010101u);
  }
  query_results batch;
  index.query(queries, batch);
  if (batch.size() != queries.size()) return "batch query lost queries";
  const auto key = [](const index_match& m) {
    return std::make_tuple(m.id, m.fingerprint, m.timestamp, m.distance);
  };
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    const uint64_t q = queries[qi];
    std::vector<index_match> expected;
    for (const auto& e : live) {
      const int dist = std::popcount(q ^ e.fingerprint);
      if (dist <= k) expected.push_back({e.id, e.fingerprint, e.timestamp, dist});
    }
    std::vector<index_match> got = index.query(q);
    const std::span<const index_match> in_batch = batch[qi];
    if (!std::equal(got.begin(), got.end(), in_batch.begin(), in_batch.end()))
      return "batch and single queries differ";
    const auto by_key = [&](const index_match& a, const index_match& b) { return key(a) < key(b); };
    std::sort(expected.begin(), expected.end(), by_key);
    std::sort(got.begin(), got.end(), by_key);
    if (!std::includes(expected.begin(), expected.end(), got.begin(), got.end(), by_key))
      return "a match that is not an entry of the file within k";
    if (complete && got.size() != expected.size()) return "a file as written lost matches";
  }
  if (!live.empty()) {
    const uint64_t id = live.front().id;
    const auto count = static_cast<std::size_t>(
        std::count_if(live.begin(), live.end(), [&](const file_entry& e) { return e.id == id; }));
    if (index.remove(id) != count) return "remove() did not find every entry of its id";
    for (const auto& m : index.query(live.front().fingerprint)) {
      if (m.id == id) return "a removed id is still found";
    }
  }
  return "";
}

/// Loads `bytes` (through `file`) as given and with its checksum recomputed. `as_written`: the
/// bytes are a file simdup wrote (a seed), so queries must find every entry within k. The
/// harness cannot assume it even when the checksum matches: libFuzzer learns checksums from
/// comparisons.
inline std::string check_index_file(std::string_view bytes, mem_file& file,
                                    bool as_written = false) {
  const auto check_one = [&](std::string_view content, bool complete) -> std::string {
    // A small mutable segment: the default (65536 entries) allocates and fills megabytes of
    // hash chains per load, which made this harness six times slower. The file's contents
    // do not depend on it.
    online_index_options options;
    options.segment_capacity = 64;
    auto index = online_index::load(file.write(content), options);
    if (!index) {
      const errc c = index.error().code;
      if (c != errc::corrupt_data && c != errc::unsupported)
        return "load failed with " + std::string(errc_name(c));
      if (index.error().message.empty()) return "load failed without a message";
      return "";
    }
    const auto live = parse_index_entries(content);
    if (!live) return "loaded a file whose sizes do not add up";
    return check_loaded(*index, *live, complete);
  };
  if (auto e = check_one(bytes, as_written); !e.empty()) return "as given: " + e;
  if (bytes.size() < 16) return "";
  std::string fixed(bytes);
  const uint64_t sum = XXH3_64bits(fixed.data(), fixed.size() - 8);
  if (std::memcmp(fixed.data() + fixed.size() - 8, &sum, 8) == 0) return "";
  std::memcpy(fixed.data() + fixed.size() - 8, &sum, 8);
  if (auto e = check_one(fixed, false); !e.empty()) return "checksum fixed: " + e;
  return "";
}

}  // namespace simdup::fuzz
