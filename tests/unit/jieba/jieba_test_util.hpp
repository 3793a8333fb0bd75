// Shared by the jieba unit tests: the golden file and a segmenter loaded once per process.
#pragma once

#include <simdup/jieba.hpp>
#include "test_paths.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace simdup::test {

inline const std::string& jieba_golden_path() {
  static const std::string path =
      std::string(SIMDUP_TEST_DATA_DIR) + "/golden/jieba/jieba_golden.json";
  return path;
}

inline simdjson::dom::element jieba_golden() {
  static simdjson::dom::parser parser;
  static simdjson::dom::element root = parser.load(jieba_golden_path());
  return root;
}

/// (input, words) pairs of one section of the golden file.
inline std::vector<std::pair<std::string, std::vector<std::string>>> golden_cases(
    const char* section) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (simdjson::dom::element c : jieba_golden()[section].get_array()) {
    simdjson::dom::array pair = c.get_array();
    std::vector<std::string> words;
    for (simdjson::dom::element w : pair.at(1).get_array())
      words.emplace_back(std::string_view(w.get_string()));
    out.emplace_back(std::string(std::string_view(pair.at(0).get_string())), std::move(words));
  }
  return out;
}

/// The default segmenter (HMM on), loaded once: loading under ASan takes a moment.
inline std::shared_ptr<const jieba_segmenter> default_jieba() {
  static std::shared_ptr<const jieba_segmenter> seg = [] {
    auto r = jieba_segmenter::create({});
    if (!r) ADD_FAILURE() << r.error().message << " (run `make deps`)";
    return r ? *r : nullptr;
  }();
  return seg;
}

inline std::vector<std::string> cut(const segmenter& s, std::string_view text) {
  std::vector<std::string_view> views;
  s.segment(text, views);
  return {views.begin(), views.end()};
}

}  // namespace simdup::test
