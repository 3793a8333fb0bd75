// Replaying a fuzz corpus without libFuzzer: the unit test build (sanitizers on, any compiler)
// reads fuzz/corpus/<name> and feeds the harness's checks the corpus and random mutations of it.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>
#include "test_paths.hpp"

namespace simdup::test_support {

/// Every file of fuzz/corpus/<name>, as bytes.
inline std::vector<std::string> read_fuzz_corpus(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(SIMDUP_SOURCE_DIR "/fuzz/corpus/" + name)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

/// One to four random edits of `s`: flip a byte, delete a run, insert one of `tokens` (the
/// syntax the parser under test cares about), or duplicate a slice of up to `max_slice` bytes.
inline std::string mutate(std::string s, std::span<const std::string> tokens, std::mt19937& rng,
                          std::size_t max_slice) {
  for (int m = 1 + static_cast<int>(rng() % 4); m > 0; --m) {
    const std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 4) {
      case 0:
        if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
        break;
      case 1:
        s.erase(pos, rng() % 8);
        break;
      case 2:
        s.insert(pos, tokens[rng() % tokens.size()]);
        break;
      default:
        s.insert(pos, s.substr(rng() % (s.size() + 1), rng() % max_slice));
    }
  }
  return s;
}

}  // namespace simdup::test_support
