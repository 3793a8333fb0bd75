// Reading and writing the online index file (docs/index-format.md, version 3; reads 1 and 2).
#pragma once

#include <simdup/error.hpp>
#include <simdup/plan.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "index/segment.hpp"

namespace simdup::detail {

/// Written by this build. Version 3 replaced the directories by slots with presence masks
/// (segment header word 6 = 3); version 2 added filter bits beside the ordinals (word 5);
/// version 1 files hold only segments without them (word 5 zero). Segments of version 1 and 2
/// files are rebuilt on load (sealed_segment::adopt).
inline constexpr uint32_t index_file_version = 3;

struct file_segment {
  std::span<const uint64_t> words;  ///< into the mapping
  std::vector<uint64_t> deleted;    ///< copied: deletion bits change after loading
};

struct index_file {
  index_layout layout;
  std::vector<file_segment> segments;
  uint64_t expired = 0, removed = 0;
  std::shared_ptr<const void> owner;  ///< the file mapping
};

/// Maps and checks a file: magic, version, checksum, layout, sizes. Segment contents are
/// checked by sealed_segment::adopt.
result<index_file> read_index_file(const std::string& path);

/// Writes path + ".tmp", then renames it over `path`.
status write_index_file(const std::string& path, const index_layout& layout,
                        const std::vector<std::shared_ptr<sealed_segment>>& segments,
                        uint64_t expired, uint64_t removed);

}  // namespace simdup::detail
