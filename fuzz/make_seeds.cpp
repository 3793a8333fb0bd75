// Writes the binary seed files of fuzz/corpus (index files, jieba.bin, gzip/zstd inputs) with
// the library's own writers, so that the seeds are files simdup really writes or reads.
// Usage: fuzz_make_seeds SOURCE_DIR (then commit what changed under SOURCE_DIR/fuzz/corpus).
// The text seeds are written by hand; tests/data/index/v*_small.simdupix are copied as the
// older-version index seeds (fuzz/corpus/index_file/v1_fixture, v2_fixture), not here.
#include <simdup/online_index.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "jieba_fuzz_check.hpp"
#include "reader_fuzz_check.hpp"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

bool save_index(const fs::path& path, simdup::online_index_options o, int entries, int removed) {
  auto index = simdup::online_index::create(std::move(o));
  if (!index) return false;
  uint64_t x = 0x9e3779b97f4a7c15u;
  std::vector<uint64_t> fps;
  for (int i = 0; i < entries; ++i) {
    // Half random, half near an earlier fingerprint (so queries find neighbours).
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t fp = (i % 2 == 1) ? (fps[i - 1] ^ (uint64_t{1} << (x % 64))) : x;
    fps.push_back(fp);
    index->insert({.fingerprint = fp, .id = static_cast<uint64_t>(i % 13), .timestamp = 1000 + i});
  }
  for (int i = 0; i < removed; ++i) index->remove(static_cast<uint64_t>(i));
  fs::create_directories(path.parent_path());
  if (auto st = index->save(path.string()); !st) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), st.error().message.c_str());
    return false;
  }
  std::printf("%s\n", path.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
    return 2;
  }
  const fs::path corpus = fs::path(argv[1]) / "fuzz" / "corpus";
  using simdup::index_layout;
  simdup::online_index_options o;
  o.layout = index_layout::even(3, 6);
  o.segment_capacity = 16;  // several sealed segments from a few dozen entries
  bool ok = save_index(corpus / "index_file" / "empty.simdupix", o, 0, 0);
  ok &= save_index(corpus / "index_file" / "one_segment.simdupix", o, 16, 0);
  ok &= save_index(corpus / "index_file" / "segments_removed.simdupix", o, 40, 3);
  o.layout = index_layout::two_level(3, 4, 4);
  ok &= save_index(corpus / "index_file" / "two_level.simdupix", o, 24, 1);
  o.layout = index_layout::even(1, 2);
  o.segment_capacity = 64;
  ok &= save_index(corpus / "index_file" / "k1_m2.simdupix", o, 60, 0);

  namespace jb = simdup::fuzz::jieba_bin;
  write(corpus / "jieba_dict" / "small.bin", jb::small());
  write(corpus / "jieba_dict" / "ascii_words.bin", jb::make({{"C++", 3},
                                                             {"machine", 5},
                                                             {"learning", 4},
                                                             {"北京", 9},
                                                             {"北京大学", 7},
                                                             {"大学", 8},
                                                             {"学习", 6}}));

  using simdup::fuzz::gzip_bytes;
  using simdup::fuzz::zstd_bytes;
  const std::string jsonl =
      "{\"id\":1,\"text\":\"first document\",\"url\":\"http://a.example/\"}\n"
      "{\"id\":\"two\",\"text\":\"自然语言 second\",\"time\":\"2024-05-01T12:00:00Z\"}\n";
  const std::string warc =
      "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
      "WARC-Target-URI: http://a.example/\r\nContent-Length: 11\r\n\r\nhello world\r\n\r\n";
  const fs::path c = corpus / "compressed_reader";
  write(c / "jsonl.gz", gzip_bytes(jsonl));
  write(c / "jsonl.zst", zstd_bytes(jsonl));
  write(c / "warc_members.gz", gzip_bytes(warc) + gzip_bytes(warc));
  write(c / "text_frames.zst", zstd_bytes("line one\nline two\n") + zstd_bytes("line three\n"));
  // pzstd's layout: a skippable frame (its payload the next frame's size) before every frame.
  const std::string frame = zstd_bytes(jsonl);
  std::string skippable("\x50\x2a\x4d\x18\x04\x00\x00\x00", 8);
  for (int shift = 0; shift < 32; shift += 8) skippable += static_cast<char>(frame.size() >> shift);
  write(c / "pzstd_frames.zst", skippable + frame + skippable + frame);
  const std::string gz = gzip_bytes(jsonl);
  write(c / "truncated.gz", gz.substr(0, gz.size() - 10));
  const std::string zst = zstd_bytes(jsonl + jsonl);
  write(c / "truncated.zst", zst.substr(0, zst.size() / 2));
  return ok ? 0 : 1;
}
