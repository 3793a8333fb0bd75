// MinHash-LSH band keys and candidate pairs (include/simdup/minhash.hpp).
#include <simdup/minhash.hpp>
#include <simdup/verify.hpp>

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace simdup {
namespace {

std::vector<uint32_t> hashes_of(const std::string& text) {
  std::vector<uint32_t> out;
  shingle_hashes(text, 5, 0, out);
  return out;
}

std::string random_words(std::mt19937_64& rng, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out.push_back('w');
    out.append(std::to_string(rng() % 5000));
    out.push_back(' ');
  }
  return out;
}

// The definition, bin by bin: each hash updates its bin's minimum; an empty bin takes the next
// filled bin's minimum (circularly) with the distance in the upper 32 bits; band keys chain
// splitmix64 over the band's rows. The library finds the same minima by galloping.
uint64_t splitmix_finaliser(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<uint64_t> band_keys_by_definition(const std::vector<uint32_t>& hashes,
                                              const minhash_options& o) {
  const std::size_t bins = o.bands * o.rows;
  std::vector<uint64_t> minimum(bins, UINT64_MAX);
  for (const uint32_t h : hashes) {
    uint64_t& m = minimum[(uint64_t{h} * bins) >> 32];
    m = std::min<uint64_t>(m, h);
  }
  std::vector<uint64_t> value(bins);
  for (std::size_t b = 0; b < bins; ++b) {
    std::size_t step = 0;
    while (minimum[(b + step) % bins] == UINT64_MAX) ++step;
    value[b] = minimum[(b + step) % bins] | (uint64_t{step} << 32);
  }
  std::vector<uint64_t> keys(o.bands);
  for (std::size_t band = 0; band < o.bands; ++band) {
    uint64_t key = splitmix_finaliser(band + 1);
    for (std::size_t r = 0; r < o.rows; ++r) {
      key = splitmix_finaliser(key ^ value[band * o.rows + r]);
    }
    keys[band] = key == 0 ? 1 : key;
  }
  return keys;
}

TEST(MinHash, BandKeysFollowTheDefinition) {
  std::mt19937_64 rng(17);
  std::vector<uint64_t> got;
  for (const minhash_options o :
       {minhash_options{.bands = 10, .rows = 6}, minhash_options{.bands = 16, .rows = 4},
        minhash_options{.bands = 64, .rows = 16}, minhash_options{.bands = 1, .rows = 1}}) {
    for (const std::size_t n : {1, 2, 7, 59, 60, 61, 300, 1024, 5000, 40000}) {
      std::set<uint32_t> set;
      while (set.size() < n) set.insert(static_cast<uint32_t>(rng()));
      if (n == 7) set = {0u, 1u, UINT32_MAX - 1, UINT32_MAX, 1u << 31, 5u, 77u};  // the edges
      const std::vector<uint32_t> hashes(set.begin(), set.end());
      minhash_band_keys(hashes, o, got);
      EXPECT_EQ(got, band_keys_by_definition(hashes, o)) << o.bands << "x" << o.rows << " n=" << n;
    }
  }
}

TEST(MinHash, ParsesTheSpec) {
  EXPECT_EQ(parse_minhash_spec("off")->bands, 0u);
  const auto o = parse_minhash_spec("10x6");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->bands, 10u);
  EXPECT_EQ(o->rows, 6u);
  for (const char* bad : {"", "10", "x6", "0x4", "65x4", "4x0", "4x17", "4x4x4", "ax4"}) {
    const auto r = parse_minhash_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::invalid_argument);
  }
}

TEST(MinHash, EqualSetsShareEveryBandAndEmptySetsHaveNone) {
  const minhash_options o{8, 4, 64};
  std::vector<uint64_t> a, b;
  minhash_band_keys(hashes_of("the same text, twice over"), o, a);
  minhash_band_keys(hashes_of("the same text, twice over"), o, b);
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a, b);
  for (uint64_t k : a) EXPECT_NE(k, 0u);
  minhash_band_keys({}, o, a);
  EXPECT_TRUE(a.empty());
}

TEST(MinHash, BandAgreementFollowsTheJaccard) {
  // Pairs at Jaccard about 0.8 agree on a 4-row band about 0.8^4 = 41 % of the time; pairs of
  // unrelated texts almost never.
  std::mt19937_64 rng(5);
  const minhash_options o{16, 4, 64};
  std::size_t near_agree = 0, far_agree = 0, bands = 0;
  std::vector<uint64_t> ka, kb, kc;
  for (int t = 0; t < 50; ++t) {
    const std::string base = random_words(rng, 400);
    // Replace about 1/18 of the text: Jaccard near 0.8 for 5-gram sets.
    std::string edited = base;
    for (std::size_t pos = rng() % 200; pos + 40 < edited.size(); pos += 720) {
      edited.replace(pos, 40, random_words(rng, 6));
    }
    const auto ha = hashes_of(base), hb = hashes_of(edited), hc = hashes_of(random_words(rng, 400));
    minhash_band_keys(ha, o, ka);
    minhash_band_keys(hb, o, kb);
    minhash_band_keys(hc, o, kc);
    for (std::size_t i = 0; i < o.bands; ++i) {
      near_agree += ka[i] == kb[i];
      far_agree += ka[i] == kc[i];
    }
    bands += o.bands;
    const double j = sketch_jaccard(ha, hb, 0);
    EXPECT_GT(j, 0.6);
  }
  EXPECT_GT(near_agree, bands / 5);
  EXPECT_EQ(far_agree, 0u);
}

TEST(MinHash, PairsAreUniqueOrderedSkippedAndCappedPerBucket) {
  // 2 bands; documents 0,1,2 share band 0; 1 and 2 also share band 1 (one pair, once).
  // Document 3 has no keys. Documents 4..9 share band 1 with max_bucket 2: each pairs with the
  // first two members only.
  const minhash_options o{2, 4, 2};
  std::vector<uint64_t> keys = {7, 1, 7, 2, 7, 2, 0, 0, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5};
  keys[1 * 2 + 1] = 3;  // document 1: band 1 differs from 2's
  keys[2 * 2 + 1] = 3;  // now 1 and 2 share both bands
  for (std::size_t d = 4; d < 10; ++d) keys[d * 2 + 0] = 100 + d;  // band 0: all different
  std::vector<index_pair> out;
  minhash_pairs(
      keys, 10, o, [](uint32_t a, uint32_t b) { return a == 0 && b == 2; }, out);
  std::vector<std::pair<uint32_t, uint32_t>> got;
  for (const auto& p : out) got.emplace_back(p.a, p.b);
  const std::vector<std::pair<uint32_t, uint32_t>> want = {
      {0, 1}, {1, 2}, {4, 5}, {4, 6}, {4, 7}, {4, 8}, {4, 9}, {5, 6}, {5, 7}, {5, 8}, {5, 9}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace simdup
