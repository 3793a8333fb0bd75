// The stream and batch engines on hand-made signatures (no text pipeline involved).
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>

namespace simdup {
namespace {

doc_signature sig(uint64_t fingerprint, std::string_view content, std::string_view url = "") {
  doc_signature s;
  s.fingerprint = fingerprint;
  s.has_fingerprint = true;
  s.content_key = exact_key(content);
  s.url_key = url_key(url);
  s.length = static_cast<uint32_t>(content.size());
  return s;
}

doc_signature short_sig(std::string_view content) {
  doc_signature s = sig(0, content);
  s.has_fingerprint = false;
  return s;
}

std::vector<dedup_decision> run_stream(const dedup_options& o, std::vector<doc_signature> docs) {
  auto engine = stream_deduplicator::create(o);
  EXPECT_TRUE(engine);
  std::vector<dedup_decision> out;
  for (const auto& d : docs) out.push_back(engine->add(d).value());
  return out;
}

std::vector<dedup_decision> run_batch(const dedup_options& o, std::vector<doc_signature> docs) {
  auto engine = batch_deduplicator::create(o);
  EXPECT_TRUE(engine);
  for (auto& d : docs) EXPECT_TRUE(engine->add(std::move(d)));
  auto out = engine->finish();
  EXPECT_TRUE(out);
  return std::move(out).value();
}

// The engines' tests use the plain profile they were written for: k = 3, no verification, no
// MinHash, components; each test turns on what it needs.
dedup_options plain_options() {
  dedup_options o;
  o.detection.k = 3;
  o.detection.verify.reset();
  o.detection.minhash = minhash_options{};
  o.detection.clustering = cluster_linking::components;
  return o;
}

dedup_options stream_options() {
  dedup_options o = plain_options();
  o.mode = dedup_mode::stream;
  return o;
}

TEST(StreamDedup, ExactLayersComeFirst) {
  const auto d =
      run_stream(stream_options(),
                 {sig(0x0, "alpha", "http://a.com/x"), sig(0xFFFF, "alpha"),
                  sig(0xFF00FF00, "other", "https://www.a.com/x/"), sig(0x0F0F0F0F0F, "third")});
  EXPECT_TRUE(d[0].kept(0));
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_EQ(d[1].layer, dedup_layer::exact);
  EXPECT_EQ(d[1].distance, 16);
  EXPECT_EQ(d[2].representative, 0u);
  EXPECT_EQ(d[2].layer, dedup_layer::url);
  EXPECT_TRUE(d[3].kept(3));
  EXPECT_EQ(d[3].layer, dedup_layer::none);
}

TEST(StreamDedup, NearWithinKInclusiveAndNotBeyond) {
  const auto d = run_stream(stream_options(),
                            {sig(0, "a"), sig(0b111, "b"), sig(0b1111 << 8, "c"), sig(0b11, "d")});
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_EQ(d[1].layer, dedup_layer::near);
  EXPECT_EQ(d[1].distance, 3);
  EXPECT_TRUE(std::isnan(d[1].jaccard));
  EXPECT_TRUE(d[2].kept(2));
  // Within k of 0 (2 bits) and of the dropped doc 1 (1 bit): only kept documents count.
  EXPECT_EQ(d[3].representative, 0u);
  EXPECT_EQ(d[3].distance, 2);
}

TEST(StreamDedup, KeysOfDroppedDocumentsPointAtTheKeptOriginal) {
  const auto d = run_stream(stream_options(), {sig(0, "a"), sig(1, "b", "http://u.com/1"),
                                               sig(0xFFFFFFFF00000000, "c", "http://u.com/1")});
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_EQ(d[2].representative, 0u);
  EXPECT_EQ(d[2].layer, dedup_layer::url);
}

TEST(StreamDedup, ShortDocumentsOnlyMatchExactly) {
  const auto d = run_stream(stream_options(),
                            {short_sig("hi"), short_sig("ho"), short_sig("hi"), sig(0, "x")});
  EXPECT_TRUE(d[1].kept(1));
  EXPECT_EQ(d[2].representative, 0u);
  EXPECT_EQ(d[2].layer, dedup_layer::exact);
  EXPECT_EQ(d[2].distance, -1);
  // A fingerprint 0 document is not a near duplicate of short documents (which have none).
  EXPECT_TRUE(d[3].kept(3));
}

TEST(StreamDedup, VerificationRejectsDissimilarCandidates) {
  dedup_options o = stream_options();
  o.detection.verify = verify_options{};
  doc_signature a = sig(0, "a"), b = sig(1, "b"), c = sig(2, "c");
  a.shingles = {1, 2, 3, 4, 5};
  b.shingles = {1, 2, 3, 4, 6};     // 4/6 < 0.8
  c.shingles = {1, 2, 3, 4, 5, 6};  // 5/6 >= 0.8
  const auto d = run_stream(o, {a, b, c});
  EXPECT_TRUE(d[1].kept(1));
  EXPECT_EQ(d[2].representative, 0u);
  EXPECT_FLOAT_EQ(d[2].jaccard, 5.0f / 6.0f);
}

TEST(StreamDedup, RejectsKOutsideTheIndexRange) {
  dedup_options o = stream_options();
  o.detection.k = -1;
  EXPECT_FALSE(stream_deduplicator::create(o));
  o.detection.k = 65;
  const auto r = stream_deduplicator::create(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::invalid_argument);
}

TEST(BatchDedup, ComponentsChainAndStarDoesNot) {
  // 0 ~ 1 (2 bits), 1 ~ 2 (2 bits), 0 vs 2: 4 bits > k.
  const std::vector<doc_signature> docs{sig(0, "a"), sig(0b11, "b"), sig(0b1111, "c")};
  dedup_options o = plain_options();
  auto comp = run_batch(o, docs);
  EXPECT_TRUE(comp[0].kept(0));
  EXPECT_EQ(comp[1].representative, 0u);
  EXPECT_EQ(comp[2].representative, 0u);
  EXPECT_EQ(comp[2].distance, 4);  // chained: further than k from its representative
  o.detection.clustering = cluster_linking::star;
  auto star = run_batch(o, docs);
  EXPECT_EQ(star[1].representative, 0u);
  EXPECT_TRUE(star[2].kept(2));
}

TEST(BatchDedup, KeepLongestAndNewestChooseTheRepresentative) {
  std::vector<doc_signature> docs{sig(0, "short"), sig(1, "the longest text"), sig(3, "mid")};
  docs[0].time = 300;
  docs[1].time = 100;
  dedup_options o = plain_options();
  o.keep = keep_policy{keep_rule::longest, ""};
  auto d = run_batch(o, docs);
  EXPECT_TRUE(d[1].kept(1));
  EXPECT_EQ(d[0].representative, 1u);
  EXPECT_EQ(d[2].representative, 1u);
  EXPECT_EQ(d[2].distance, 1);
  o.keep = keep_policy{keep_rule::newest, ""};
  d = run_batch(o, docs);
  EXPECT_TRUE(d[0].kept(0));  // doc 2 has no time: oldest
  EXPECT_EQ(d[1].representative, 0u);
}

TEST(BatchDedup, ExactGroupsFollowTheirBestMember) {
  // Three copies of one text (the longest copy is the last, say an HTML-wrapped one) and a
  // near duplicate of them.
  std::vector<doc_signature> docs{sig(0xF0, "same"), sig(0xF0, "same"), sig(0xF1, "near"),
                                  sig(0xF0, "same")};
  docs[3].length = 100;
  dedup_options o = plain_options();
  o.keep = keep_policy{keep_rule::longest, ""};
  const auto d = run_batch(o, docs);
  EXPECT_TRUE(d[3].kept(3));
  EXPECT_EQ(d[0].representative, 3u);
  EXPECT_EQ(d[0].layer, dedup_layer::exact);
  EXPECT_EQ(d[1].layer, dedup_layer::exact);
  EXPECT_EQ(d[2].representative, 3u);
  EXPECT_EQ(d[2].layer, dedup_layer::near);
  EXPECT_EQ(d[2].distance, 1);
}

TEST(BatchDedup, VerificationRejectsPairsAndCountsThem) {
  dedup_options o = plain_options();
  o.detection.verify = verify_options{};
  std::vector<doc_signature> docs{sig(0, "a"), sig(1, "b"), sig(2, "c")};
  docs[0].shingles = {1, 2, 3, 4, 5};
  docs[1].shingles = {1, 2, 3, 4, 5, 6};
  docs[2].shingles = {1, 2, 3, 4, 9};  // sizes allow 0.8, shares too little: 4/6 and 4/7
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine);
  for (auto& s : docs) ASSERT_TRUE(engine->add(std::move(s)));
  const auto d = engine->finish().value();
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_FLOAT_EQ(d[1].jaccard, 5.0f / 6.0f);
  EXPECT_TRUE(d[2].kept(2));
  EXPECT_EQ(engine->candidate_pairs(), 3u);
  EXPECT_EQ(engine->rejected_pairs(), 2u);
}

TEST(BatchDedup, RandomCorpusDecisionsAreConsistent) {
  std::mt19937_64 rng(3);
  std::vector<doc_signature> docs;
  for (int i = 0; i < 3000; ++i) {
    uint64_t fp = rng();
    if (i > 0 && i % 3 == 0) {
      fp = docs[rng() % docs.size()].fingerprint;
      for (int b = 0; b < static_cast<int>(rng() % 6); ++b) fp ^= 1ull << (rng() % 64);
    }
    docs.push_back(sig(fp, "doc" + std::to_string(i % 2500)));
  }
  for (cluster_linking linking : {cluster_linking::components, cluster_linking::star}) {
    dedup_options o = plain_options();
    o.detection.clustering = linking;
    o.keep = keep_policy{keep_rule::longest, ""};
    const auto d = run_batch(o, docs);
    std::size_t kept = 0;
    for (uint32_t i = 0; i < d.size(); ++i) {
      const uint32_t rep = d[i].representative;
      ASSERT_TRUE(d[rep].kept(rep)) << i;
      if (d[i].kept(i)) {
        ++kept;
        continue;
      }
      EXPECT_GE(docs[rep].length, docs[i].length);  // longest of its cluster
      if (linking == cluster_linking::star && d[i].layer == dedup_layer::near) {
        EXPECT_LE(d[i].distance, 3);
      }
      if (d[i].layer == dedup_layer::exact) {
        // Linked by its text: some other document has the same content key.
        std::size_t same = 0;
        for (const auto& other : docs) same += other.content_key == docs[i].content_key ? 1 : 0;
        EXPECT_GE(same, 2u);
      }
    }
    EXPECT_LT(kept, 2600u);
    EXPECT_GT(kept, 1500u);
  }
}

// A random corpus with exact copies, shared URLs, near duplicates and shingle arrays that make
// about half of the near candidates fail verification.
std::vector<doc_signature> random_corpus(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<doc_signature> docs;
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t fp = rng();
    std::string content = "doc" + std::to_string(i);
    std::string url = "http://x.org/" + std::to_string(i);
    std::vector<uint32_t> shingles(20);
    for (uint32_t j = 0; j < 20; ++j) shingles[j] = static_cast<uint32_t>(i) * 64 + j;
    if (i > 0 && rng() % 3 == 0) {
      const doc_signature& src = docs[rng() % docs.size()];
      fp = src.fingerprint;
      for (int b = 0; b < static_cast<int>(rng() % 5); ++b) fp ^= 1ull << (rng() % 64);
      shingles = src.shingles;
      if (rng() % 2) {  // 4 of 20 replaced: Jaccard 16/24 with its source, rejected
        for (uint32_t j = 16; j < 20; ++j) shingles[j] += uint32_t{1} << 30;
      }
    }
    if (i > 0 && rng() % 20 == 0) content = "doc" + std::to_string(rng() % i);
    if (i > 0 && rng() % 20 == 0) url = "http://x.org/" + std::to_string(rng() % i);
    doc_signature d = sig(fp, content, url);
    d.shingles = std::move(shingles);
    docs.push_back(std::move(d));
  }
  return docs;
}

TEST(StreamDedup, BatchAddDecidesExactlyAsOneByOne) {
  for (bool verify : {false, true}) {
    dedup_options o = stream_options();
    o.detection.k = 4;
    if (verify) o.detection.verify = verify_options{};
    const auto docs = random_corpus(2000, 9);
    const auto one_by_one = run_stream(o, docs);
    auto engine = stream_deduplicator::create(o);
    ASSERT_TRUE(engine);
    std::vector<dedup_decision> batched, part;
    // Uneven chunks, so that near duplicates fall both inside a chunk and across chunks.
    for (std::size_t first = 0; first < docs.size(); first += 37) {
      const std::size_t count = std::min<std::size_t>(37, docs.size() - first);
      ASSERT_TRUE(engine->add(std::span(docs).subspan(first, count), part));
      ASSERT_EQ(part.size(), count);
      batched.insert(batched.end(), part.begin(), part.end());
    }
    ASSERT_EQ(batched.size(), one_by_one.size());
    std::size_t near = 0;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      EXPECT_EQ(batched[i].representative, one_by_one[i].representative) << i;
      EXPECT_EQ(batched[i].layer, one_by_one[i].layer) << i;
      EXPECT_EQ(batched[i].distance, one_by_one[i].distance) << i;
      near += batched[i].layer == dedup_layer::near ? 1 : 0;
    }
    EXPECT_GT(near, 100u);
  }
}

TEST(BatchDedup, CandidatePairsDoNotDependOnTheLinking) {
  const auto docs = random_corpus(3000, 4);
  uint64_t candidates[2] = {0, 0};
  for (cluster_linking linking : {cluster_linking::components, cluster_linking::star}) {
    dedup_options o = plain_options();
    o.detection.clustering = linking;
    auto engine = batch_deduplicator::create(o);
    ASSERT_TRUE(engine);
    for (auto d : docs) ASSERT_TRUE(engine->add(std::move(d)));
    ASSERT_TRUE(engine->finish());
    candidates[linking == cluster_linking::star] = engine->candidate_pairs();
  }
  EXPECT_GT(candidates[0], 500u);
  EXPECT_EQ(candidates[0], candidates[1]);
}

// Shingle arrays of the values 0..n-1 shifted by `offset`: two of them share max(0, n - |offset
// difference|). The values are spread over 32 bits by a bijection and sorted, as shingle hashes
// are (the candidate filter's sketch assumes it).
std::vector<uint32_t> shingle_range(uint32_t offset, uint32_t n) {
  std::vector<uint32_t> out(n);
  for (uint32_t j = 0; j < n; ++j) out[j] = (offset + j) * 0x9E3779B1u;
  std::sort(out.begin(), out.end());
  return out;
}

TEST(BatchDedup, AnchoredClustersSplitMembersFarFromTheRepresentative) {
  // A drifting family: each document shares 90 of its 100 shingles with the next (Jaccard
  // 0.82, verified), all fingerprints within k; two steps apart is 0.67 (rejected). Components
  // put all five in one cluster although 0 and 4 are at 0.43 (0 and 3: 0.54). Anchored at 0.6
  // keeps 1 and 2 with 0 and starts a new cluster at 3, with 4.
  std::vector<doc_signature> docs;
  for (uint32_t i = 0; i < 5; ++i) {
    doc_signature d = sig(i, "doc" + std::to_string(i));
    d.shingles = shingle_range(i * 10, 100);
    docs.push_back(std::move(d));
  }
  dedup_options o = plain_options();
  o.detection.verify = verify_options{};
  o.detection.clustering = cluster_linking::components;
  auto d = run_batch(o, docs);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(d[i].representative, 0u) << i;
  EXPECT_NEAR(d[4].jaccard, 60.0 / 140.0, 1e-6);
  o.detection.clustering = cluster_linking::anchored;
  o.detection.anchor_floor = 0.6;
  d = run_batch(o, docs);
  EXPECT_TRUE(d[0].kept(0));
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_EQ(d[2].representative, 0u);
  EXPECT_NEAR(d[2].jaccard, 80.0 / 120.0, 1e-6);
  EXPECT_TRUE(d[3].kept(3));
  EXPECT_EQ(d[4].representative, 3u);
  for (uint32_t i = 0; i < 5; ++i) {
    if (!d[i].kept(i)) {
      EXPECT_GE(d[i].jaccard, 0.6) << i;
    }
  }
  // At the default floor, 0.8: 2 (0.67 from 0) leaves with 3 and 4; 4 is 0.67 from 2 and
  // leaves again: {0, 1}, {2, 3}, {4}.
  o.detection.anchor_floor = detection_profile{}.anchor_floor;
  d = run_batch(o, docs);
  const std::vector<uint32_t> reps = {d[0].representative, d[1].representative, d[2].representative,
                                      d[3].representative, d[4].representative};
  EXPECT_EQ(reps, (std::vector<uint32_t>{0, 0, 2, 2, 4}));
  // Without verification there are no shingles to anchor with: a clear error.
  o.detection.verify.reset();
  auto engine = batch_deduplicator::create(o);
  ASSERT_FALSE(engine);
  EXPECT_EQ(engine.error().code, errc::invalid_argument);
}

TEST(BatchDedup, MinHashFindsVerifiedPairsBeyondK) {
  // 0 and 1 share 95 of 100 shingles (Jaccard 0.9) but their fingerprints are 64 bits apart;
  // 2 is unrelated. SimHash alone misses the pair; MinHash bands find it and it verifies.
  std::vector<doc_signature> docs = {sig(0, "a"), sig(~uint64_t{0}, "b"), sig(0xF0F0, "c")};
  docs[0].shingles = shingle_range(0, 100);
  docs[1].shingles = shingle_range(5, 100);
  docs[2].shingles = shingle_range(1000, 100);
  dedup_options o = plain_options();
  o.detection.verify = verify_options{};
  o.detection.clustering = cluster_linking::anchored;
  auto d = run_batch(o, docs);
  EXPECT_TRUE(d[1].kept(1));
  o.detection.minhash = minhash_options{16, 4, 64};
  // shingle_range spreads the values over 32 bits, as shingle_hashes does, so that bins fill.
  for (auto& doc : docs) minhash_band_keys(doc.shingles, o.detection.minhash, doc.band_keys);
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine);
  for (auto doc : docs) ASSERT_TRUE(engine->add(std::move(doc)));
  auto out = engine->finish();
  ASSERT_TRUE(out);
  d = std::move(out).value();
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_EQ(d[1].layer, dedup_layer::near);
  EXPECT_EQ(d[1].distance, 64);
  EXPECT_NEAR(d[1].jaccard, 95.0 / 105.0, 1e-6);
  EXPECT_TRUE(d[2].kept(2));
  EXPECT_GE(engine->minhash_candidate_pairs(), 1u);
  // MinHash candidates need verification.
  o.detection.verify.reset();
  o.detection.clustering = cluster_linking::star;
  EXPECT_FALSE(batch_deduplicator::create(o));
}

TEST(BatchDedup, UrlDuplicatesFollowTheirGroupBeyondK) {
  // B is a near duplicate of A (distance 1); C shares B's URL but not its text (distance 20
  // from A). C joins B's exact group and so A's cluster: layer "url", distance 20 > k. Only
  // near links are bounded by k (with star clusters); exact-key links are not.
  const uint64_t a = 0, b = 1, c = (1ull << 20) - 1;
  for (cluster_linking linking : {cluster_linking::components, cluster_linking::star}) {
    dedup_options o = plain_options();
    o.detection.clustering = linking;
    const auto d =
        run_batch(o, {sig(a, "A", "http://a"), sig(b, "B", "http://b"), sig(c, "C", "http://b")});
    EXPECT_TRUE(d[0].kept(0));
    EXPECT_EQ(d[1].representative, 0u);
    EXPECT_EQ(d[1].layer, dedup_layer::near);
    EXPECT_EQ(d[2].representative, 0u);
    EXPECT_EQ(d[2].layer, dedup_layer::url);
    EXPECT_EQ(d[2].distance, 20);
  }
}

TEST(BatchDedup, VerifiesManyPairsThroughTheSpillFile) {
  // More documents than the spill buffer holds; every verdict matches the in-memory Jaccard.
  dedup_options o = plain_options();
  o.detection.k = 4;
  o.detection.verify = verify_options{};
  const auto docs = random_corpus(3000, 12);
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine);
  for (auto d : docs) ASSERT_TRUE(engine->add(std::move(d)));
  const auto d = engine->finish().value();
  EXPECT_GT(engine->rejected_pairs(), 50u);
  std::size_t near = 0;
  for (uint32_t i = 0; i < d.size(); ++i) {
    if (d[i].layer != dedup_layer::near) continue;
    ++near;
    const uint32_t rep = d[i].representative;
    const double j = sketch_jaccard(docs[i].shingles, docs[rep].shingles, 0);
    EXPECT_FLOAT_EQ(d[i].jaccard, static_cast<float>(j)) << i;
    EXPECT_GE(j, 0.8) << i;
  }
  EXPECT_GT(near, 100u);
}

}  // namespace
}  // namespace simdup
