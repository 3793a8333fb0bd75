// What the Chinese-data harnesses check on every input, shared with the replay test
// (tests/unit/jieba/jieba_fuzz_test.cpp) that runs without clang:
//   - fuzz/jieba_dict_fuzz.cpp: jieba.bin (docs/chinese.md), as given and with its size and
//     CRC fixed so that mutations reach the payload checks;
//   - fuzz/user_dict_fuzz.cpp: a user dictionary (jieba's `word [freq] [tag]` lines) over a
//     small base dictionary;
//   - fuzz/weight_files_fuzz.cpp: the same bytes as an IDF file (`word idf`) and a stop-word
//     file, through the jieba-tfidf fingerprinter that uses both.
// Users hand simdup these files (--jieba-dict, --user-dict, --idf, --stopwords): a bad file is
// an error naming it, never a crash. A segmenter that loads cuts every text into non-empty
// words that concatenate to the text, deterministically. Each check returns "" when all holds.
#pragma once

#include <simdup/fingerprint.hpp>
#include <simdup/jieba.hpp>

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_memfile.hpp"

namespace simdup::fuzz {

namespace jieba_bin {

inline void put_u32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
inline void put_u64(std::string& s, uint64_t v) {
  s.append(reinterpret_cast<const char*>(&v), 8);
}
inline void put_f64(std::string& s, double v) {
  s.append(reinterpret_cast<const char*>(&v), 8);
}

/// Header (magic, version 1, CRC-32 and size of the payload) + payload: jieba.bin's framing.
inline std::string frame(std::string_view payload) {
  std::string out("SIMDUPJB", 8);
  put_u32(out, 1);
  put_u32(out, static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(payload.data()),
                                           static_cast<uInt>(payload.size()))));
  put_u64(out, payload.size());
  return out.append(payload);
}

/// Recomputes the size and CRC of a jieba.bin whose payload was changed (24-byte header).
inline bool refresh(std::string& bin) {
  if (bin.size() < 24) return false;
  const std::string_view payload = std::string_view(bin).substr(24);
  const std::string fixed = frame(payload);
  if (fixed.compare(0, 24, bin, 0, 24) == 0) return false;
  bin.replace(8, 16, fixed, 8, 16);
  return true;
}

/// A small jieba.bin: `words` (sorted, UTF-8) with their frequencies, jieba's HMM start and
/// transition probabilities and emissions for a few characters.
inline std::string make(std::vector<std::pair<std::string, uint32_t>> words) {
  std::sort(words.begin(), words.end());  // the loader wants them in byte order
  std::string p;
  uint64_t total = 0;
  for (const auto& w : words) total += w.second;
  put_u64(p, total);
  put_u32(p, static_cast<uint32_t>(words.size()));
  for (const auto& w : words) put_u32(p, w.second);
  uint32_t off = 0;
  put_u32(p, 0);
  for (const auto& w : words) put_u32(p, off += static_cast<uint32_t>(w.first.size()));
  for (const auto& w : words) p += w.first;
  constexpr double no = -3.14e100;
  for (double s : {-0.26268660809250016, no, no, -1.4652633398537678}) put_f64(p, s);
  const std::array<std::array<double, 4>, 4> trans = {
      {{no, -0.916290731874155, -0.510825623765990, no},
       {no, -1.2603623820268226, -0.33344856811948514, no},
       {-0.5897149736854513, no, no, -0.8085250474669937},
       {-0.7211965654669841, no, no, -0.6658631448798212}}};
  for (const auto& row : trans)
    for (double t : row) put_f64(p, t);
  const uint32_t chars[] = {0x4E2D, 0x6587, 0x5206, 0x8BCD};  // 中 文 分 词
  put_u32(p, 4);
  for (uint32_t i = 0; i < 4; ++i) {
    put_u32(p, chars[i]);
    for (double e : {-8.0 - i, -9.0, -7.5 + i, -10.0}) put_f64(p, e);
  }
  return frame(p);
}

/// The base dictionary of the user-dictionary and weight-file harnesses (and a seed).
inline std::string small() {
  return make({{"中", 20},
               {"中文", 50},
               {"分", 10},
               {"分词", 40},
               {"词", 15},
               {"文", 12},
               {"测试", 30},
               {"自然", 25},
               {"自然语言", 35},
               {"语言", 28}});
}

}  // namespace jieba_bin

/// Texts every loaded segmenter cuts: Chinese with and without dictionary words, ASCII runs,
/// punctuation, line breaks, invalid UTF-8, and (tail) bytes from the fuzz input itself.
inline std::vector<std::string> jieba_probe_texts(std::string_view input) {
  return {"自然语言处理中文分词测试", "我们在北京大学学习 machine learning 3.14 和 C++ 编程！",
          "\xe4\xb8\xad\xff文\r\n分\xe8\xaf词\t\xf0\x9f\x98\x80 emoji",
          std::string(input.substr(0, 256))};
}

/// Segments `texts` twice; words must be non-empty and concatenate to the text.
inline std::string check_segments(const jieba_segmenter& seg,
                                  const std::vector<std::string>& texts) {
  std::vector<std::string_view> words, again;
  for (const auto& text : texts) {
    words.clear();
    seg.segment(text, words);
    std::string joined;
    for (std::string_view w : words) {
      if (w.empty()) return "an empty word";
      if (w.data() < text.data() || w.data() + w.size() > text.data() + text.size())
        return "a word outside the text";
      joined += w;
    }
    if (joined != text) return "words do not concatenate to the text";
    again.clear();
    seg.segment(text, again);
    if (again != words) return "not deterministic";
  }
  return "";
}

inline std::string check_load_error(const error_info& e, std::string_view path) {
  if (e.message.empty()) return "error without message";
  if (e.message.find(path) == std::string::npos)
    return "error does not name the file: " + e.message;
  if (e.code != errc::corrupt_data && e.code != errc::invalid_input)
    return "unexpected error code " + std::string(errc_name(e.code));
  return "";
}

/// jieba.bin from the fuzzer, as given and with its header refreshed.
inline std::string check_jieba_dict(std::string_view bytes, const shm_dir& dir) {
  const auto one = [&](std::string_view bin) -> std::string {
    const std::string path = dir.write("jieba.bin", bin);
    jieba_options o;
    o.dict = dir.path();
    auto seg = jieba_segmenter::create(o);
    if (!seg) return check_load_error(seg.error(), path);
    if ((*seg)->total() == 0) return "loaded with total 0";
    return check_segments(**seg, jieba_probe_texts(bytes.substr(bytes.size() / 2)));
  };
  if (auto e = one(bytes); !e.empty()) return "as given: " + e;
  std::string fixed(bytes);
  if (!jieba_bin::refresh(fixed)) return "";
  if (auto e = one(fixed); !e.empty()) return "header refreshed: " + e;
  return "";
}

/// A directory holding the small base dictionary, for the harnesses below.
inline const shm_dir& base_jieba_dir() {
  static const shm_dir dir;
  static const bool written = (dir.write("jieba.bin", jieba_bin::small()), true);
  (void)written;
  return dir;
}

inline std::string check_user_dict(std::string_view bytes) {
  const shm_dir& dir = base_jieba_dir();
  const std::string path = dir.write("user.dict", bytes);
  jieba_options o;
  o.dict = dir.path();
  o.user_dicts = {path};
  auto seg = jieba_segmenter::create(o);
  if (!seg) return check_load_error(seg.error(), path);
  return check_segments(**seg, jieba_probe_texts(bytes));
}

/// The bytes as IDF and stop-word files of the jieba-tfidf fingerprinter (over the small
/// dictionary): a bad IDF file is an error naming it; else fingerprints are deterministic and
/// weights are numbers.
inline std::string check_weight_files(std::string_view bytes) {
  const shm_dir& dir = base_jieba_dir();
  // The segmenter over the base dictionary is the same for every input: loaded once (a load
  // fills its HMM and trie tables, about 1 MB, which took most of each run).
  static const std::shared_ptr<const jieba_segmenter> base = [&] {
    jieba_options jo;
    jo.dict = dir.path();
    auto seg = jieba_segmenter::create(jo);
    if (!seg) __builtin_trap();
    return std::move(*seg);
  }();
  const std::string path = dir.write("weights.txt", bytes);
  fingerprint_options o;
  o.compat = compat_mode::jieba_tfidf;
  o.features.jieba_dict = dir.path();
  o.features.segmenter = base;
  o.weighting.idf_path = path;
  o.weighting.stopwords_path = path;
  auto fp = fingerprinter::create(o);
  if (!fp) return check_load_error(fp.error(), path);
  for (const auto& text : jieba_probe_texts(bytes)) {
    const fingerprint_result a = fp->fingerprint(text);
    const fingerprint_result b = fp->fingerprint(text);
    if (a.fingerprint != b.fingerprint || a.status != b.status) return "not deterministic";
    for (const auto& f : fp->features(text)) {
      if (std::isnan(f.weight)) return "a NaN weight";
    }
  }
  return "";
}

}  // namespace simdup::fuzz
