// Without clang's libFuzzer: replays fuzz/corpus/index_file (files simdup wrote: every query
// must be answered completely) and random mutations of it, with the checksum fixed as the
// harness does, through the checks of fuzz/index_file_fuzz.cpp, under the sanitizers of the
// unit test build.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "../../../fuzz/index_file_fuzz_check.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::fuzz {
namespace {

using simdup::test_support::read_fuzz_corpus;

TEST(IndexFileFuzz, CorpusLoadsAndAnswersCompletely) {
  mem_file file;
  const auto inputs = read_fuzz_corpus("index_file");
  ASSERT_GE(inputs.size(), 5u);
  for (const auto& in : inputs) {
    ASSERT_TRUE(online_index::load(file.write(in))) << "a seed does not load";
    EXPECT_EQ(check_index_file(in, file, /*as_written=*/true), "");
  }
}

// The campaign's find (docs/fuzzing.md): with its checksum fixed, a file whose table 1 lists one
// ordinal twice loaded and answered that entry twice; the loader now refuses it.
TEST(IndexFileFuzz, CampaignFindRepeatedOrdinalIsRefused) {
  std::ifstream in(SIMDUP_SOURCE_DIR "/tests/data/fuzz/index_file_repeated_ordinal.bin",
                   std::ios::binary);
  ASSERT_TRUE(in);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  mem_file file;
  EXPECT_EQ(check_index_file(bytes, file), "");
  std::string fixed = bytes;
  const uint64_t sum = XXH3_64bits(fixed.data(), fixed.size() - 8);
  std::memcpy(fixed.data() + fixed.size() - 8, &sum, 8);
  const auto loaded = online_index::load(file.write(fixed));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, errc::corrupt_data);
  EXPECT_NE(loaded.error().message.find("segment 0 is inconsistent"), std::string::npos)
      << loaded.error().message;
}

// Word-level edits (the format is 64-bit words): overwrite a word with a nearby or extreme
// value, swap two words, cut the file, flip a bit. check_index_file also retries with the
// checksum fixed, so the edits reach the segment checks.
TEST(IndexFileFuzz, RandomMutationsAreErrorsOrRightAnswers) {
  mem_file file;
  const auto inputs = read_fuzz_corpus("index_file");
  std::mt19937_64 rng(20261125);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = inputs[rng() % inputs.size()];
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0 && s.size() >= 16; --m) {
      const std::size_t words = s.size() / 8;
      const std::size_t w = rng() % words;
      uint64_t v;
      std::memcpy(&v, s.data() + 8 * w, 8);
      switch (rng() % 5) {
        case 0:
          v += (rng() % 5) - 2;
          break;
        case 1:
          v = (rng() % 2) ? ~uint64_t{0} : uint64_t{1} << (rng() % 64);
          break;
        case 2:
          v ^= uint64_t{1} << (rng() % 64);
          break;
        case 3: {
          const std::size_t w2 = rng() % words;
          std::memcpy(&v, s.data() + 8 * w2, 8);
          break;
        }
        default:
          s.resize(8 * (1 + rng() % words));
          continue;
      }
      std::memcpy(s.data() + 8 * w, &v, 8);
    }
    ASSERT_EQ(check_index_file(s, file), "") << "iteration " << iter;
  }
}

}  // namespace
}  // namespace simdup::fuzz
