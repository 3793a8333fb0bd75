// Reads the JSONL golden vectors under tests/data/golden.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>
#include "test_paths.hpp"

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace simdup::testing {

/// Calls fn(row) for each JSON object of tests/data/golden/<name>; returns the row count.
template <class Fn>
std::size_t for_each_golden_row(const std::string& name, Fn&& fn) {
  std::ifstream in(std::string(SIMDUP_TEST_DATA_DIR) + "/golden/" + name, std::ios::binary);
  EXPECT_TRUE(in) << "missing golden file " << name;
  simdjson::dom::parser parser;
  std::string line;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    simdjson::dom::element row;
    const auto err = parser.parse(line).get(row);
    EXPECT_FALSE(err) << name << ": " << line;
    if (err) continue;
    ++rows;
    fn(row);
  }
  return rows;
}

/// A string field of a row (empty when absent).
inline std::string field(simdjson::dom::element row, const char* key) {
  std::string_view v;
  if (row[key].get(v)) return {};
  return std::string(v);
}

/// Parses 16 hex digits.
inline uint64_t hex64(const std::string& s) {
  return std::stoull(s, nullptr, 16);
}

}  // namespace simdup::testing
