#include <simdup/verify.hpp>
#include "test_paths.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "io/io_test_util.hpp"

namespace simdup {
namespace {

std::vector<uint32_t> shingles(std::string_view text, std::size_t width, std::size_t cap = 0) {
  std::vector<uint32_t> out;
  shingle_hashes(text, width, cap, out);
  return out;
}

TEST(ParseVerifySpec, AcceptsJaccardThresholds) {
  auto v = parse_verify_spec("jaccard:0.8");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->threshold, 0.8);
  EXPECT_EQ(v->shingle_width, 5u);
  ASSERT_TRUE(parse_verify_spec("jaccard:1"));
  for (const char* bad : {"jaccard:0", "jaccard:1.5", "jaccard:", "jaccard:x", "cosine:0.5",
                          "jaccard:0.5x", "jaccard:-0.1", "jaccard:nan"}) {
    const auto r = parse_verify_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::invalid_argument);
    // The library names the parameter; the CLI turns it into --verify.
    EXPECT_EQ(r.error().message.rfind("verify: expected", 0), 0u) << r.error().message;
  }
}

TEST(VerifyNormalizeOptions, KeepPunctuationAndTheFingerprintsOtherChoices) {
  normalize_options fingerprint;
  fingerprint.t2s = false;
  fingerprint.strip_digits = true;
  fingerprint.opencc_config = "/x/t2s.json";
  const normalize_options v = verify_normalize_options(fingerprint);
  EXPECT_FALSE(v.strip_punctuation || v.strip_digits || v.t2s);
  EXPECT_TRUE(v.nfkc && v.casefold && v.collapse_whitespace && v.cjk_content);
  EXPECT_EQ(v.opencc_config, "/x/t2s.json");
}

TEST(ShingleHashes, CountsDistinctCodePointShingles) {
  // abc bca cab abc: three distinct 3-shingles.
  EXPECT_EQ(shingles("abcabc", 3).size(), 3u);
  // Code points, not bytes: five CJK characters have three 3-shingles.
  EXPECT_EQ(shingles("中文字符串", 3).size(), 3u);
  // Shorter than the width: the whole text is one shingle.
  EXPECT_EQ(shingles("ab", 5).size(), 1u);
  EXPECT_EQ(shingles("ab", 5), shingles("ab", 2));
  EXPECT_TRUE(shingles("", 5).empty());
  const auto s = shingles("the quick brown fox jumps", 5);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
}

// tests/data/golden/shingle_hashes.tsv, computed from the definition by
// gen_shingle_hashes.py: texts of many lengths and widths, so that every path (the vector one
// where the CPU has it, its tail, the scalar one, texts shorter than the width) is checked.
TEST(ShingleHashes, MatchTheGoldenVectors) {
  std::ifstream in(std::string(SIMDUP_TEST_DATA_DIR) + "/golden/shingle_hashes.tsv");
  ASSERT_TRUE(in) << "missing tests/data/golden/shingle_hashes.tsv";
  std::string line;
  std::size_t cases = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string width, hex, list;
    std::getline(fields, width, '\t');
    std::getline(fields, hex, '\t');
    std::getline(fields, list, '\t');
    std::string text;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
      text += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    std::vector<uint32_t> expected;
    std::istringstream values(list);
    for (std::string v; std::getline(values, v, ',');) {
      expected.push_back(static_cast<uint32_t>(std::stoul(v, nullptr, 16)));
    }
    EXPECT_EQ(shingles(text, std::stoul(width)), expected) << line.substr(0, 60);
    ++cases;
  }
  EXPECT_GE(cases, 50u);
}

TEST(ShingleHashes, CapKeepsTheSmallestHashes) {
  const auto all = shingles("the quick brown fox jumps over the lazy dog", 5);
  const auto cut = shingles("the quick brown fox jumps over the lazy dog", 5, 10);
  ASSERT_EQ(cut.size(), 10u);
  EXPECT_TRUE(std::equal(cut.begin(), cut.end(), all.begin()));
}

TEST(SketchJaccard, ExactOnSmallSets) {
  const std::vector<uint32_t> a{1, 2, 3}, b{2, 3, 4}, empty;
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, b, 0), 0.5);
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, a, 0), 1.0);
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, empty, 0), 0.0);
  EXPECT_DOUBLE_EQ(sketch_jaccard(empty, empty, 0), 0.0);
  // Under the cap the arrays are whole sets: still exact.
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, b, 8), 0.5);
}

TEST(SketchJaccard, ExactOnTextShingles) {
  // abcde bcdef cdefg defgh vs abcde bcdef cdefg defgx: 3 shared of 5.
  EXPECT_DOUBLE_EQ(sketch_jaccard(shingles("abcdefgh", 5), shingles("abcdefgx", 5), 0), 0.6);
}

TEST(SketchJaccard, BottomKEstimateIsCloseAndUsesOnlyComparableHashes) {
  std::mt19937 rng(11);
  std::set<uint32_t> shared, only_a, only_b;
  while (shared.size() < 3000) shared.insert(rng());
  while (only_a.size() < 500) only_a.insert(rng());
  while (only_b.size() < 500) only_b.insert(rng());
  std::vector<uint32_t> a(shared.begin(), shared.end()), b = a;
  a.insert(a.end(), only_a.begin(), only_a.end());
  b.insert(b.end(), only_b.begin(), only_b.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  const double exact = sketch_jaccard(a, b, 0);
  EXPECT_NEAR(exact, 3000.0 / 4000.0, 0.01);
  std::vector<uint32_t> ca(a.begin(), a.begin() + 256), cb(b.begin(), b.begin() + 256);
  EXPECT_NEAR(sketch_jaccard(ca, cb, 256), exact, 0.1);
  // A full small set against a cut large one: only hashes below the cut are compared.
  const std::vector<uint32_t> small{a[0], a[1]};
  EXPECT_DOUBLE_EQ(sketch_jaccard(small, ca, 256), 2.0 / 256.0);
}

TEST(JaccardAtLeast, ExactAtOrAboveTheThresholdAndBelowItOtherwise) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    std::set<uint32_t> sa, sb;
    const std::size_t shared = rng() % 600, only_a = rng() % 200, only_b = rng() % 200;
    while (sa.size() < shared) sa.insert(static_cast<uint32_t>(rng() % 5000));
    sb = sa;
    while (sa.size() < shared + only_a) sa.insert(5000 + static_cast<uint32_t>(rng() % 5000));
    while (sb.size() < shared + only_b) sb.insert(10000 + static_cast<uint32_t>(rng() % 5000));
    const std::vector<uint32_t> a(sa.begin(), sa.end()), b(sb.begin(), sb.end());
    const double exact = sketch_jaccard(a, b, 0);
    for (double t : {0.0, 0.5, 0.8, 0.95}) {
      const double j = jaccard_at_least(a, b, t);
      if (exact >= t) {
        EXPECT_DOUBLE_EQ(j, exact) << trial << " " << t;
      } else {
        EXPECT_LT(j, t) << trial << " " << t;
      }
    }
  }
  // Exactly at the threshold counts as reaching it.
  const std::vector<uint32_t> four{1, 2, 3, 4}, five{1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(jaccard_at_least(four, five, 0.8), 0.8);
  EXPECT_DOUBLE_EQ(jaccard_at_least({}, {}, 0.8), 0.0);
}

TEST(JaccardSizeBound, RulesOutExactlyThePairsTooUnequalInSize) {
  // 4 of 5 can still reach 0.8 (all 4 shared); 3 of 5 cannot: at most 3 / 5.
  EXPECT_FALSE(jaccard_size_bound(4, 5, 0.8));
  ASSERT_TRUE(jaccard_size_bound(3, 5, 0.8));
  EXPECT_DOUBLE_EQ(*jaccard_size_bound(3, 5, 0.8), 0.6);
  EXPECT_DOUBLE_EQ(*jaccard_size_bound(5, 3, 0.8), 0.6);
  EXPECT_DOUBLE_EQ(*jaccard_size_bound(0, 7, 0.5), 0.0);
  EXPECT_FALSE(jaccard_size_bound(0, 0, 0.8));
  EXPECT_FALSE(jaccard_size_bound(1, 1000, 0.0));  // threshold 0: never ruled out
  // Whenever it rules a pair out, jaccard_at_least gives that value, below the threshold.
  std::vector<uint32_t> a, b;
  for (std::size_t na = 0; na <= 60; na += 3) {
    for (std::size_t nb = 0; nb <= 60; nb += 4) {
      a.resize(na);
      b.resize(nb);
      for (std::size_t i = 0; i < na; ++i) a[i] = static_cast<uint32_t>(2 * i);
      for (std::size_t i = 0; i < nb; ++i) b[i] = static_cast<uint32_t>(3 * i);
      for (double t : {0.3, 0.8, 1.0}) {
        if (const auto ruled_out = jaccard_size_bound(na, nb, t)) {
          EXPECT_DOUBLE_EQ(jaccard_at_least(a, b, t), *ruled_out) << na << " " << nb << " " << t;
          EXPECT_LT(*ruled_out, t);
          EXPECT_LT(sketch_jaccard(a, b, 0), t);
        }
      }
    }
  }
}

TEST(ShingleHashes, SetIsTheUnionOfOverlappingPieces) {
  // The shingles of a text are those of two pieces that overlap by width - 1 code points. Texts
  // of many lengths exercise the bucket sort at different bucket counts and the multi-byte path.
  std::mt19937 rng(5);
  const std::vector<std::string> alphabet{"a", "b", "c", " ", "é", "中", "文", "😀"};
  for (std::size_t length : {12u, 40u, 300u, 2500u, 20000u}) {
    std::vector<std::string> cps;
    for (std::size_t i = 0; i < length; ++i) cps.push_back(alphabet[rng() % alphabet.size()]);
    const std::size_t width = 5, cut = length / 3;
    std::string whole, left, right;
    for (std::size_t i = 0; i < length; ++i) {
      whole += cps[i];
      if (i < cut + width - 1) left += cps[i];
      if (i >= cut) right += cps[i];
    }
    const auto all = shingles(whole, width);
    ASSERT_TRUE(std::is_sorted(all.begin(), all.end()));
    ASSERT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    std::set<uint32_t> expected;
    for (uint32_t h : shingles(left, width)) expected.insert(h);
    for (uint32_t h : shingles(right, width)) expected.insert(h);
    EXPECT_EQ(all, std::vector<uint32_t>(expected.begin(), expected.end())) << length;
  }
}

TEST(ShingleHashes, ALongTextIsHashedInPiecesWithTheSameSet) {
  // Texts over 2 MiB are hashed piece by piece (bounded scratch); the set must be the one the
  // whole text has, checked here as the union of small overlapping pieces hashed whole.
  std::mt19937 rng(11);
  for (const bool cjk : {false, true}) {
    std::string whole;
    std::vector<std::size_t> starts;  // byte offset of each code point
    while (whole.size() < (std::size_t{5} << 20) + 7) {
      starts.push_back(whole.size());
      if (cjk) {
        const uint32_t c = 0x4E00 + rng() % 3000;  // three bytes each
        whole += static_cast<char>(0xE0 | (c >> 12));
        whole += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        whole += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        whole += rng() % 6 == 0 ? ' ' : static_cast<char>('a' + rng() % 20);
      }
    }
    starts.push_back(whole.size());
    const std::size_t width = 5, step = 300000, cps = starts.size() - 1;
    std::vector<uint32_t> expected;
    for (std::size_t first = 0; first < cps; first += step) {
      const std::size_t last = std::min(cps, first + step + width - 1);
      if (last - first < width) break;  // no whole shingle starts here
      const auto hashes = shingles(
          std::string_view(whole).substr(starts[first], starts[last] - starts[first]), width);
      expected.insert(expected.end(), hashes.begin(), hashes.end());
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    const auto all = shingles(whole, width);
    EXPECT_EQ(all, expected) << cjk;
    // The cap keeps the smallest of the whole set, as for a short text.
    const auto cut = shingles(whole, width, 1000);
    ASSERT_EQ(cut.size(), 1000u);
    EXPECT_TRUE(std::equal(cut.begin(), cut.end(), all.begin()));
  }
}

using test::temp_dir;

// A full disk (a file-size limit: EFBIG, as ENOSPC) fails the write that does not fit, naming
// the directory, the reason and the bytes; every later call fails the same way.
TEST(ShingleStore, AFailedWriteNamesTheBytesNeededAndStaysFailed) {
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string(), 4096);
  ASSERT_TRUE(store) << store.error().message;
  rlimit previous{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = previous;
  small.rlim_cur = 64 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::vector<uint32_t> hashes(1000);
  for (uint32_t v = 0; v < hashes.size(); ++v) hashes[v] = v * 4000000u;
  status st;
  uint32_t ordinal = 0;
  for (; st && ordinal < 1000; ++ordinal) st = store->put(ordinal, hashes);
  const status again = store->put(ordinal, hashes);
  const status flushed = store->flush();
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);

  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::no_space);
  const std::string& message = st.error().message;
  EXPECT_NE(message.find("cannot write the temporary file of --verify in " + dir.path().string()),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_NE(message.find("more bytes needed"), std::string::npos) << message;
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, message);
  ASSERT_FALSE(flushed);
}

// A named file outlives its store; reopened, adopt() takes its arrays back in order, the bytes
// a killed run wrote after them are cut, and put() goes on after them.
TEST(ShingleStore, ANamedFileIsReopenedAndItsArraysAdopted) {
  temp_dir dir;
  const std::string path = (dir.path() / "shingles.bin").string();
  std::vector<std::vector<uint32_t>> arrays = {{1, 5, 9}, {}, {2, 4, 6, 8, 100000}, {7}};
  {
    auto store = shingle_store::create_file(path, 16);
    ASSERT_TRUE(store) << store.error().message;
    for (uint32_t i = 0; i < arrays.size(); ++i) {
      if (!arrays[i].empty()) {
        ASSERT_TRUE(store->put(i, arrays[i]));
      }
    }
    ASSERT_TRUE(store->put(4, std::vector<uint32_t>{3, 33}));  // not adopted below: cut
    ASSERT_TRUE(store->flush());
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  auto store = shingle_store::reopen_file(path, 16);
  ASSERT_TRUE(store) << store.error().message;
  for (uint32_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i].empty()) {
      ASSERT_TRUE(store->adopt(i, arrays[i].size()));
    }
  }
  std::vector<uint32_t> got;
  for (uint32_t i = 0; i < arrays.size(); ++i) {
    ASSERT_TRUE(store->get(i, got));
    EXPECT_EQ(got, arrays[i]) << i;
  }
  const uint64_t adopted = store->stored_bytes();
  ASSERT_TRUE(store->end_adopting());
  EXPECT_EQ(std::filesystem::file_size(path), adopted);
  ASSERT_TRUE(store->put(4, std::vector<uint32_t>{10, 20, 30}));
  ASSERT_TRUE(store->flush());
  ASSERT_TRUE(store->get(4, got));
  EXPECT_EQ(got, (std::vector<uint32_t>{10, 20, 30}));
  ASSERT_TRUE(store->get(2, got));
  EXPECT_EQ(got, arrays[2]);
  // A file that ends before an array is damaged, and a missing one is not found.
  auto again = shingle_store::reopen_file(path, 16);
  ASSERT_TRUE(again);
  ASSERT_TRUE(again->adopt(0, 3));
  const status beyond = again->adopt(1, 100000);
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().code, errc::corrupt_data);
  EXPECT_EQ(shingle_store::reopen_file((dir.path() / "missing").string()).error().code,
            errc::not_found);
}

TEST(ShingleStore, RoundTripsArraysThroughTheFileAndTheBuffer) {
  temp_dir dir;
  // A 100-byte buffer: most arrays go to the file, the last ones stay buffered.
  auto store = shingle_store::create(dir.path().string(), 100);
  ASSERT_TRUE(store) << store.error().message;
  // Unlinked at once: nothing is visible in the directory.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  std::mt19937 rng(7);
  std::vector<std::vector<uint32_t>> arrays(40);
  std::size_t hashes = 0;
  for (uint32_t i = 0; i < arrays.size(); ++i) {
    if (i % 5 == 3) continue;  // a gap: empty array
    std::set<uint32_t> set;
    const std::size_t n = i == 7 ? 2000 : rng() % 50;
    while (set.size() < n) set.insert(static_cast<uint32_t>(rng()));
    if (i == 11) set.insert({0u, UINT32_MAX});  // extreme values survive the coding
    // Crowded buckets of the top-8-bit bitmap: 3,000 hashes under 2^24, all in the first
    // bucket; and the last bucket.
    if (i == 14) {
      for (uint32_t v = 0; v < 3000; ++v) set.insert(v * 5000);
    }
    if (i == 17) {
      for (uint32_t v = 0; v < 500; ++v) set.insert(UINT32_MAX - v * 7);
    }
    arrays[i].assign(set.begin(), set.end());
    hashes += arrays[i].size();
    ASSERT_TRUE(store->put(i, arrays[i]));
  }
  EXPECT_EQ(store->size(), arrays.size());
  std::vector<uint32_t> got{99};
  for (uint32_t i = 0; i < arrays.size(); ++i) {
    ASSERT_TRUE(store->get(i, got));
    EXPECT_EQ(got, arrays[i]) << i;
    EXPECT_EQ(store->count(i), arrays[i].size()) << i;
  }
  ASSERT_TRUE(store->get(1000, got));
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(store->count(1000), 0u);
  ASSERT_TRUE(store->flush());
  ASSERT_TRUE(store->get(7, got));
  EXPECT_EQ(got, arrays[7]);
  // Memory is the offsets and the buffer (at most the buffer size plus one encoded array).
  EXPECT_LT(store->memory_bytes(), 100 + 4 * 3000 + 41 * 8 + 100u);
  EXPECT_GT(hashes, 5000u);
}

TEST(ShingleStore, CountsHashesByTopByteWithoutDecoding) {
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string(), 256);
  ASSERT_TRUE(store);
  std::mt19937 rng(23);
  std::vector<std::vector<uint32_t>> arrays;
  for (std::size_t n : {1u, 7u, 300u, 2500u, 40u}) {
    std::set<uint32_t> set;
    while (set.size() < n) set.insert(static_cast<uint32_t>(rng()) >> (n == 40 ? 4 : 0));
    if (n == 7) set.insert(UINT32_MAX);
    arrays.emplace_back(set.begin(), set.end());
  }
  for (uint32_t i = 0; i < arrays.size(); ++i) ASSERT_TRUE(store->put(i, arrays[i]));
  std::array<uint32_t, 256> counts{};
  for (uint32_t i = 0; i < arrays.size(); ++i) {
    std::array<uint32_t, 256> expected{};
    for (const uint32_t h : arrays[i]) ++expected[h >> 24];
    ASSERT_TRUE(store->top_byte_counts(i, counts));
    EXPECT_EQ(counts, expected) << i;
  }
  ASSERT_TRUE(store->top_byte_counts(99, counts));
  EXPECT_EQ(counts, (std::array<uint32_t, 256>{}));
}

TEST(JaccardSharedBound, RulesOutWhatTooFewSharedHashesCannotReach) {
  // 10 and 10 hashes need 8.9 shared for 0.8: 8 rule it out (8 / 12), 9 do not.
  ASSERT_TRUE(jaccard_shared_bound(8, 10, 10, 0.8));
  EXPECT_DOUBLE_EQ(*jaccard_shared_bound(8, 10, 10, 0.8), 8.0 / 12.0);
  EXPECT_FALSE(jaccard_shared_bound(9, 10, 10, 0.8));
  // More than the smaller set cannot be shared: the sizes decide.
  EXPECT_EQ(jaccard_shared_bound(50, 3, 5, 0.8), jaccard_size_bound(3, 5, 0.8));
}

TEST(ShingleStore, CountsEveryArraySizeFromItsLength) {
  // The count comes from the encoded length alone: every size maps to a distinct length.
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string(), 1 << 16);
  ASSERT_TRUE(store);
  std::mt19937 rng(17);
  std::vector<uint32_t> array;
  uint32_t ordinal = 0;
  for (std::size_t n = 0; n <= 700; ++n, ++ordinal) {
    std::set<uint32_t> set;
    while (set.size() < n) set.insert(static_cast<uint32_t>(rng()));
    array.assign(set.begin(), set.end());
    ASSERT_TRUE(store->put(ordinal, array));
    ASSERT_EQ(store->count(ordinal), n);
  }
  std::vector<uint32_t> got;
  ASSERT_TRUE(store->get(ordinal - 1, got));
  EXPECT_EQ(got, array);
}

TEST(ShingleStore, CodesDeltasCompactly) {
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string());
  ASSERT_TRUE(store);
  // A typical English article: 2,000 distinct random hashes. 3 bytes each for the low 24 bits
  // and n + 256 bits for the top 8: 6,282 bytes, 3.14 per hash instead of 4.
  std::mt19937 rng(3);
  std::set<uint32_t> set;
  while (set.size() < 2000) set.insert(static_cast<uint32_t>(rng()));
  ASSERT_TRUE(store->put(0, std::vector<uint32_t>(set.begin(), set.end())));
  EXPECT_EQ(store->stored_bytes(), 6282u);
}

TEST(ShingleStore, ReadsFromManyThreadsAtOnce) {
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string(), 64);
  ASSERT_TRUE(store);
  for (uint32_t i = 0; i < 200; ++i) {
    const std::vector<uint32_t> a{i, i + 1000, i + 100000};
    ASSERT_TRUE(store->put(i, a));
  }
  ASSERT_TRUE(store->flush());
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint32_t> got;
      for (uint32_t i = static_cast<uint32_t>(t); i < 200; i += 3) {
        if (!store->get(i, got) || got != std::vector<uint32_t>{i, i + 1000, i + 100000}) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ShingleStore, UnusableDirectoryIsAnErrorNamingIt) {
  const auto store = shingle_store::create("/nonexistent/simdup-dir");
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, errc::io_error);
  EXPECT_NE(store.error().message.find("/nonexistent/simdup-dir"), std::string::npos);
  EXPECT_NE(store.error().message.find("--tmp-dir"), std::string::npos);
}

}  // namespace
}  // namespace simdup
