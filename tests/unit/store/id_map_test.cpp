// The RocksDB backend's id map against a multimap reference: a lookup must return every number
// stored under the hash (it may add numbers of other hashes with the same tag, which the caller
// checks), through growth and removals that shift runs back across the end of a shard.
#include "store/id_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<uint64_t> found(const id_map& m, uint64_t h) {
  std::vector<uint64_t> out;
  m.find(h, out);
  std::sort(out.begin(), out.end());
  return out;
}

/// Every number of `h` in the reference is found; anything else found shares h's shard and tag.
void expect_consistent(const id_map& m, const std::multimap<uint64_t, uint64_t>& ref, uint64_t h) {
  const auto got = found(m, h);
  auto [lo, hi] = ref.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    EXPECT_TRUE(std::binary_search(got.begin(), got.end(), it->second))
        << "hash " << h << " number " << it->second;
  }
  // The top 36 bits select shard and tag: numbers found must be stored under such a hash.
  const uint64_t key = h >> 28;
  for (const uint64_t n : got) {
    const bool known = std::any_of(ref.begin(), ref.end(), [&](const auto& kv) {
      return kv.second == n && (kv.first >> 28) == key;
    });
    EXPECT_TRUE(known) << "number " << n << " found under hash " << h;
  }
}

TEST(IdMap, FindsWhatWasInsertedAndForgetsWhatWasErased) {
  // Hashes that differ in their top 36 bits (shard and tag) are told apart by the map itself.
  const uint64_t a = 0x9E3779B97F4A7C15ull, b = 0x0123456789ABCDEFull, c = 0xFEDCBA9876543210ull;
  id_map m;
  EXPECT_TRUE(found(m, a).empty());
  EXPECT_FALSE(m.erase(a, 1));
  m.insert(a, 1);
  m.insert(a, 2);  // two documents may share a hash (the caller tells them apart)
  m.insert(b, 3);
  EXPECT_EQ(found(m, a), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(found(m, b), (std::vector<uint64_t>{3}));
  EXPECT_EQ(m.size(), 3u);
  EXPECT_TRUE(m.erase(a, 1));
  EXPECT_FALSE(m.erase(a, 1));
  EXPECT_EQ(found(m, a), (std::vector<uint64_t>{2}));
  EXPECT_EQ(m.size(), 2u);
  m.insert(c, id_map::max_number);
  EXPECT_EQ(found(m, c), (std::vector<uint64_t>{id_map::max_number}));
  // Only the top 36 bits count: a hash differing below them finds the same numbers.
  EXPECT_EQ(found(m, b ^ 0xFFF), (std::vector<uint64_t>{3}));
}

TEST(IdMap, RandomInsertsAndErasesMatchAMultimap) {
  std::mt19937_64 rng(11);
  id_map m;
  std::multimap<uint64_t, uint64_t> ref;
  std::vector<uint64_t> hashes;
  // Few shards and tags (the top bits drawn from a small set) make long runs, shared tags and
  // wrap-around at the end of a shard likely.
  const auto draw = [&] {
    const uint64_t top = rng() % 3;     // shard 0, 1 or 2
    const uint64_t tag = rng() % 4096;  // tags clustered at the low end: homes crowd together
    return (top << 52) | (tag << 28) | (rng() & ((uint64_t{1} << 28) - 1));
  };
  uint64_t next = 1;
  for (int step = 0; step < 60000; ++step) {
    const bool add = hashes.empty() || rng() % 3 != 0;
    if (add) {
      const uint64_t h = hashes.empty() || rng() % 4 ? draw() : hashes[rng() % hashes.size()];
      m.insert(h, next);
      ref.emplace(h, next);
      hashes.push_back(h);
      ++next;
    } else {
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      ASSERT_TRUE(m.erase(it->first, it->second));
      ref.erase(it);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(m.size(), ref.size());
      for (int probe = 0; probe < 50 && !hashes.empty(); ++probe) {
        expect_consistent(m, ref, hashes[rng() % hashes.size()]);
      }
    }
  }
  for (const auto& [h, n] : ref) {
    const auto got = found(m, h);
    ASSERT_TRUE(std::binary_search(got.begin(), got.end(), n)) << h << " " << n;
  }
  // Emptied, every lookup finds nothing.
  for (auto it = ref.begin(); it != ref.end(); it = ref.erase(it)) {
    ASSERT_TRUE(m.erase(it->first, it->second));
  }
  EXPECT_EQ(m.size(), 0u);
  for (const uint64_t h : hashes) EXPECT_TRUE(found(m, h).empty());
}

TEST(IdMap, ReserveKeepsWhatIsStoredAndSizesOnce) {
  std::mt19937_64 rng(5);
  id_map m;
  std::vector<uint64_t> hashes;
  for (uint64_t i = 1; i <= 1000; ++i) {
    hashes.push_back(rng());
    m.insert(hashes.back(), i);
  }
  m.reserve(400'000);  // the start of a restart: about as many ids as the index file holds
  const std::size_t reserved = m.memory_bytes();
  for (uint64_t i = 1001; i <= 400'000; ++i) {
    hashes.push_back(rng());
    m.insert(hashes.back(), i);
  }
  // Sized once for 400,000: hardly a shard grew.
  EXPECT_LT(m.memory_bytes(), reserved + reserved / 20);
  for (uint64_t i = 1; i <= 400'000; i += 997) {
    const auto got = found(m, hashes[i - 1]);
    EXPECT_TRUE(std::binary_search(got.begin(), got.end(), i)) << i;
  }
}

TEST(IdMap, MemoryStaysNearElevenBytesPerId) {
  id_map m;
  std::mt19937_64 rng(3);
  constexpr std::size_t n = 2'000'000;
  for (std::size_t i = 1; i <= n; ++i) m.insert(rng(), i);
  const double per_id = static_cast<double>(m.memory_bytes()) / n;
  EXPECT_GT(per_id, 8.0);
  EXPECT_LT(per_id, 14.5);
}

}  // namespace
}  // namespace simdup::detail
