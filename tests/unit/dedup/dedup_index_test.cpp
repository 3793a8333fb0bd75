// The dedup index (write, open, checks, merge) and the batch engine against it, on hand-made
// documents: every expected match below follows from the fingerprints, keys and shingle sets
// chosen here (Jaccard of [0, 100) and [10, 100) is 0.9; of [0, 100) and [50, 150), 1/3), and
// against an index of bottom-k sketches, the shingle sets' smallest hashes.
#include <simdup/all_pairs.hpp>
#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/fingerprint_scan.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>

namespace simdup {
namespace {

namespace fs = std::filesystem;

std::vector<uint32_t> range_set(uint32_t from, uint32_t to) {
  std::vector<uint32_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

dedup_options verified_options() {
  dedup_options o;
  o.detection.k = 3;
  o.detection.minhash = minhash_options{};
  o.detection.clustering = cluster_linking::star;
  return o;
}

class DedupIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("simdup-index-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An index of three documents: "old-0" (fingerprint 0, shingles [0,100), url a.com/x),
  // "old-1" (no fingerprint, text key "short text") and 17 (fingerprint all ones, [500, 600)).
  std::string write_index(const dedup_options& o, const std::string& name = "index") {
    const std::string path = (dir_ / name).string();
    auto w = dedup_index_writer::create(path, make_index_profile(o), 0);
    EXPECT_TRUE(w) << w.error().message;
    const auto a = range_set(0, 100), c = range_set(500, 600);
    EXPECT_TRUE(w->add({.fingerprint = 0,
                        .has_fingerprint = true,
                        .url_key = url_key("http://a.com/x"),
                        .content_key = exact_key("alpha"),
                        .id = "old-0",
                        .shingles = a}));
    EXPECT_TRUE(w->add({.content_key = exact_key("short text"), .id = "old-1"}));
    EXPECT_TRUE(w->add({.fingerprint = ~uint64_t{0},
                        .has_fingerprint = true,
                        .content_key = exact_key("gamma"),
                        .id = "17",
                        .id_is_number = true,
                        .shingles = c}));
    EXPECT_TRUE(w->finish({"dump1.jsonl"}));
    return path;
  }

  fs::path dir_;
};

TEST_F(DedupIndex, ReadsBackWhatWasWritten) {
  const dedup_options o = verified_options();
  const std::string path = write_index(o);
  auto index = dedup_index::open(path);
  ASSERT_TRUE(index) << index.error().message;
  const dedup_index& x = **index;
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x.id(0), "old-0");
  EXPECT_FALSE(x.id_is_number(0));
  EXPECT_EQ(x.id(2), "17");
  EXPECT_TRUE(x.id_is_number(2));
  EXPECT_TRUE(x.has_fingerprint(0));
  EXPECT_FALSE(x.has_fingerprint(1));
  EXPECT_EQ(x.fingerprints()[2], ~uint64_t{0});
  EXPECT_EQ(x.url_keys()[0], url_key("http://a.com/x"));
  EXPECT_EQ(x.content_keys()[1], exact_key("short text"));
  EXPECT_EQ(std::vector<uint32_t>(x.shingles(2).begin(), x.shingles(2).end()), range_set(500, 600));
  EXPECT_TRUE(x.shingles(1).empty());
  EXPECT_EQ(x.sources(), std::vector<std::string>{"dump1.jsonl"});
  EXPECT_TRUE(x.check_profile(make_index_profile(o)));
  // A run's output directory is accepted for its index/ subdirectory.
  fs::rename(path, dir_ / "index-parent");
  fs::create_directories(dir_ / "run");
  fs::rename(dir_ / "index-parent", dir_ / "run" / "index");
  EXPECT_TRUE(dedup_index::open((dir_ / "run").string()));
}

TEST_F(DedupIndex, RefusesAnotherProfileNamingTheSetting) {
  const dedup_options o = verified_options();
  auto index = dedup_index::open(write_index(o));
  ASSERT_TRUE(index);
  dedup_options other = o;
  other.detection.k = 5;
  auto st = (*index)->check_profile(make_index_profile(other));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::invalid_argument);
  EXPECT_NE(st.error().message.find("k 3, this run uses 5"), std::string::npos)
      << st.error().message;
  other = o;
  other.detection.fingerprint.features.shingle_width = 7;
  st = (*index)->check_profile(make_index_profile(other));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("fingerprint.shingle_width"), std::string::npos)
      << st.error().message;
}

TEST_F(DedupIndex, DamageIsAClearError) {
  const std::string path = write_index(verified_options());
  {
    std::fstream f(path + "/shingles.u32", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  auto damaged = dedup_index::open(path);
  ASSERT_FALSE(damaged);
  EXPECT_EQ(damaged.error().code, errc::corrupt_data);
  EXPECT_NE(damaged.error().message.find("shingles.u32"), std::string::npos);
  EXPECT_NE(damaged.error().message.find("checksum"), std::string::npos);

  fs::resize_file(path + "/fingerprints.u64", 16);
  auto truncated = dedup_index::open(path);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("fingerprints.u64"), std::string::npos);

  auto missing = dedup_index::open((dir_ / "nothing").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::not_found);
}

TEST_F(DedupIndex, RefusesAnotherVersion) {
  const std::string path = write_index(verified_options());
  std::ifstream in(path + "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto at = text.find("\"version\":1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"version\":9");
  std::ofstream(path + "/manifest.json") << text;
  auto index = dedup_index::open(path);
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().code, errc::unsupported);
  EXPECT_NE(index.error().message.find("version 9"), std::string::npos);
}

TEST_F(DedupIndex, MergeConcatenatesAndChecksProfiles) {
  const dedup_options o = verified_options();
  auto a = dedup_index::open(write_index(o, "a"));
  auto b = dedup_index::open(write_index(o, "b"));
  ASSERT_TRUE(a && b);
  const std::vector<std::shared_ptr<const dedup_index>> both{*a, *b};
  ASSERT_TRUE(merge_dedup_indexes(both, (dir_ / "ab").string()));
  auto ab = dedup_index::open((dir_ / "ab").string());
  ASSERT_TRUE(ab) << ab.error().message;
  ASSERT_EQ((*ab)->size(), 6u);
  EXPECT_EQ((*ab)->id(3), "old-0");
  EXPECT_EQ((*ab)->id(5), "17");
  EXPECT_EQ((*ab)->sources().size(), 2u);

  dedup_options other = o;
  other.detection.k = 4;
  auto c = dedup_index::open(write_index(other, "c"));
  ASSERT_TRUE(c);
  const std::vector<std::shared_ptr<const dedup_index>> mixed{*a, *c};
  auto st = merge_dedup_indexes(mixed, (dir_ / "ac").string());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("k 4"), std::string::npos) << st.error().message;
}

doc_signature doc(uint64_t fp, std::string_view text, std::vector<uint32_t> shingles,
                  std::string_view url = "") {
  doc_signature s;
  s.fingerprint = fp;
  s.has_fingerprint = true;
  s.content_key = exact_key(text);
  s.url_key = url_key(url);
  s.shingles = std::move(shingles);
  return s;
}

TEST_F(DedupIndex, BatchDropsDocumentsOfEarlierRunsForTheirRealDocument) {
  dedup_options o = verified_options();
  auto index = dedup_index::open(write_index(o));
  ASSERT_TRUE(index);
  o.against = {*index};
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine);
  std::vector<doc_signature> docs;
  docs.push_back(doc(0x7, "new text", range_set(10, 100)));          // 0: near old-0 (J 0.9)
  docs.push_back(doc(0x3, "other", range_set(50, 150)));             // 1: near old-0, J 1/3
  docs.push_back(doc(0x5555, "x", range_set(900, 999), "a.com/x"));  // 2: url of old-0
  docs.push_back(doc(0x5557, "x2", range_set(900, 998)));            // 3: near 2 only
  doc_signature s = doc(0, "short text", {});                        // 4: text of old-1
  s.has_fingerprint = false;
  docs.push_back(s);
  docs.push_back(doc(~uint64_t{0} ^ 1, "gamma", range_set(500, 600)));  // 5: exact 17
  docs.push_back(doc(0x3, "other", range_set(50, 150)));                // 6: copy of 1
  for (auto& d : docs) ASSERT_TRUE(engine->add(std::move(d)));
  auto decided = engine->finish();
  ASSERT_TRUE(decided) << decided.error().message;
  const auto& d = *decided;
  EXPECT_EQ(d[0].against, 1);
  EXPECT_EQ(d[0].representative, 0u);
  EXPECT_EQ(d[0].layer, dedup_layer::near);
  EXPECT_EQ(d[0].distance, 3);
  EXPECT_NEAR(d[0].jaccard, 0.9, 1e-6);
  EXPECT_TRUE(d[1].kept(1));  // within k of old-0 but rejected by verification
  EXPECT_EQ(d[2].against, 1);
  EXPECT_EQ(d[2].layer, dedup_layer::url);
  EXPECT_EQ(d[2].representative, 0u);
  // 3 is near 2, which is dropped for an earlier document: 3 stays (2 is not kept here).
  EXPECT_TRUE(d[3].kept(3));
  EXPECT_EQ(d[4].against, 1);
  EXPECT_EQ(d[4].representative, 1u);
  EXPECT_EQ(d[4].layer, dedup_layer::exact);
  EXPECT_EQ(d[5].against, 1);
  EXPECT_EQ(d[5].representative, 2u);
  EXPECT_EQ(d[5].distance, 1);
  // Within the run, the exact copy of 1 is still a duplicate of 1.
  EXPECT_EQ(d[6].against, 0);
  EXPECT_EQ(d[6].representative, 1u);
  EXPECT_GT(engine->against_candidate_pairs(), 0u);
}

TEST_F(DedupIndex, AgainstOnlyDropsMatchesAndNothingElse) {
  dedup_options o = verified_options();
  auto index = dedup_index::open(write_index(o));
  ASSERT_TRUE(index);
  o.against = {*index};
  o.against_only = true;
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine);
  ASSERT_TRUE(engine->add(doc(0x7, "new text", range_set(10, 100))));  // near old-0
  ASSERT_TRUE(engine->add(doc(0x7, "new text", range_set(10, 100))));  // its copy: also hit
  ASSERT_TRUE(engine->add(doc(0x9999, "y", range_set(700, 800))));
  ASSERT_TRUE(engine->add(doc(0x9999, "y", range_set(700, 800))));  // a copy within the run
  auto decided = engine->finish();
  ASSERT_TRUE(decided);
  const auto& d = *decided;
  EXPECT_EQ(d[0].against, 1);
  EXPECT_EQ(d[1].against, 1);
  EXPECT_EQ(d[1].representative, 0u);
  EXPECT_TRUE(d[2].kept(2));
  EXPECT_TRUE(d[3].kept(3));  // not compared with the run's own documents
}

// A service's export (service_export.cpp): bottom-128 sketches for shingles, no band keys.
dedup_options sketch_index_options() {
  dedup_options o = verified_options();
  o.detection.verify->max_hashes = 128;
  return o;
}

TEST_F(DedupIndex, ASketchIndexTakesRunsOfAnyCapAndMinHashButTheSameFingerprintsAndK) {
  auto index = dedup_index::open(write_index(sketch_index_options()));
  ASSERT_TRUE(index);
  EXPECT_EQ((*index)->max_hashes(), 128u);
  EXPECT_EQ((*index)->bands(), 0u);
  dedup_options run = verified_options();  // every shingle (max_hashes 0)
  run.detection.minhash = minhash_options{.bands = 10, .rows = 6};
  EXPECT_TRUE((*index)->check_profile(make_index_profile(run)));
  run.detection.verify->max_hashes = 64;
  EXPECT_TRUE((*index)->check_profile(make_index_profile(run)));
  const auto refused = [&](dedup_options other, std::string_view message) {
    auto st = (*index)->check_profile(make_index_profile(other));
    ASSERT_FALSE(st) << message;
    EXPECT_EQ(st.error().code, errc::invalid_argument);
    EXPECT_NE(st.error().message.find(message), std::string::npos) << st.error().message;
  };
  dedup_options other = run;
  other.detection.k = 4;
  refused(other, "k 3, this run uses 4");
  other = run;
  other.detection.verify->shingle_width = 3;
  refused(other, "verify.shingle_width 5, this run uses 3");
  other = run;
  other.detection.verify->threshold = 0.7;
  refused(other, "verify.threshold 0.8, this run uses 0.7");
  other = run;
  other.detection.fingerprint.features.shingle_width = 7;
  refused(other, "fingerprint.shingle_width");
  other = run;
  other.detection.verify.reset();
  other.detection.clustering = cluster_linking::star;
  refused(other, "verify.threshold 0.8, this run uses (none)");

  // An index with band keys needs the run's MinHash settings: its keys are theirs.
  dedup_options banded = verified_options();
  banded.detection.minhash = minhash_options{.bands = 2, .rows = 4};
  const std::string path = (dir_ / "banded").string();
  auto w = dedup_index_writer::create(path, make_index_profile(banded), 2);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->finish({}));
  auto with_bands = dedup_index::open(path);
  ASSERT_TRUE(with_bands) << with_bands.error().message;
  auto st = (*with_bands)->check_profile(make_index_profile(run));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("minhash.bands 2, this run uses 10"), std::string::npos)
      << st.error().message;

  // Merging still wants one profile: a sketch index and an exact one do not merge.
  auto exact = dedup_index::open(write_index(verified_options(), "exact"));
  ASSERT_TRUE(exact);
  const std::vector<std::shared_ptr<const dedup_index>> mixed{*exact, *index};
  st = merge_dedup_indexes(mixed, (dir_ / "mixed").string());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("verify.max_hashes"), std::string::npos) << st.error().message;
}

TEST_F(DedupIndex, AgainstASketchIndexVerifiesOverItsCap) {
  // The index holds the bottom 128 of [0, 1000) for "a", and "b" without shingles (a
  // document the service was sent as a fingerprint).
  const std::string path = (dir_ / "sketch").string();
  {
    auto w = dedup_index_writer::create(path, make_index_profile(sketch_index_options()), 0);
    ASSERT_TRUE(w);
    const auto bottom = range_set(0, 128);
    ASSERT_TRUE(w->add({.fingerprint = 0, .has_fingerprint = true, .id = "a", .shingles = bottom}));
    ASSERT_TRUE(w->add({.fingerprint = 0xFF00, .has_fingerprint = true, .id = "b"}));
    ASSERT_TRUE(w->finish({"simdup serve collection c"}));
  }
  auto index = dedup_index::open(path);
  ASSERT_TRUE(index) << index.error().message;
  dedup_options o = verified_options();  // an exact Jaccard within the run (max_hashes 0)
  o.detection.minhash = minhash_options{.bands = 10, .rows = 6};
  ASSERT_TRUE((*index)->check_profile(make_index_profile(o)));
  o.against = {*index};
  auto engine = batch_deduplicator::create(o);
  ASSERT_TRUE(engine) << engine.error().message;
  // 0: [20, 1000), Jaccard 0.98 with a's set; over a's cap 108 of the union's 128 smallest are
  // shared (0.84). Compared exactly with the 128 stored hashes it would be 108 / 1000.
  ASSERT_TRUE(engine->add(doc(0x7, "copy of a", range_set(20, 1000))));
  // 1: [300, 1000): none of the union's 128 smallest hashes shared.
  ASSERT_TRUE(engine->add(doc(0x3, "other", range_set(300, 1000))));
  // 2: within k of b, which has no shingles: the distance decides.
  ASSERT_TRUE(engine->add(doc(0xFF01, "near b", range_set(2000, 2100))));
  auto decided = engine->finish();
  ASSERT_TRUE(decided) << decided.error().message;
  const auto& d = *decided;
  EXPECT_EQ(d[0].against, 1);
  EXPECT_EQ(d[0].representative, 0u);
  EXPECT_NEAR(d[0].jaccard, 108.0 / 128.0, 1e-6);
  EXPECT_TRUE(d[1].kept(1));
  EXPECT_EQ(d[2].against, 1);
  EXPECT_EQ(d[2].representative, 1u);
  EXPECT_EQ(d[2].distance, 1);
  EXPECT_TRUE(std::isnan(d[2].jaccard));
}

TEST(AllPairsCross, ReportsExactlyThePairsAcrossTheSplit) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> fps(3000);
  for (auto& f : fps) f = rng();
  const uint32_t split = 1200;
  // Near pairs on both sides of the split (reported) and within each side (not reported).
  for (std::size_t i = 0; i < 600; ++i) {
    fps[split + i] = fps[i] ^ (uint64_t{1} << (i % 64)) ^ (uint64_t{i % 3 == 0} << ((i + 9) % 64));
  }
  for (std::size_t i = 0; i < 300; ++i) {
    fps[600 + i] = fps[i] ^ (uint64_t{1} << (i % 61));
    fps[2400 + i] = fps[1800 + i] ^ (uint64_t{3} << (i % 60));
  }
  all_pairs_options o;
  o.layout.k = 3;
  o.cross_split = split;
  std::vector<index_pair> got;
  ASSERT_TRUE(all_pairs(fps, o, [&](std::span<const index_pair> ps) {
    got.insert(got.end(), ps.begin(), ps.end());
    return true;
  }));
  std::vector<index_pair> want;
  for (uint32_t a = 0; a < split; ++a) {
    for (uint32_t b = split; b < fps.size(); ++b) {
      const int dist = std::popcount(fps[a] ^ fps[b]);
      if (dist <= 3) want.push_back({a, b, dist});
    }
  }
  const auto by_ends = [](const index_pair& x, const index_pair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  };
  std::sort(got.begin(), got.end(), by_ends);
  EXPECT_GE(want.size(), 900u);  // the planted ones: 600, and 300 more by way of 600 + i
  EXPECT_EQ(got, want);

  // The same in passes over a scan (how dedup --against streams an index): memory for a tenth.
  fingerprint_scan scan{.size = fps.size(),
                        .read = [&](const std::function<void(std::span<const uint64_t>)>& block) {
                          block(std::span<const uint64_t>(fps).first(split));
                          block(std::span<const uint64_t>(fps).subspan(split));
                          return status{};
                        }};
  o.threads = 1;
  o.memory_limit = all_pairs_pass_bytes(fps.size() / 10, 1);
  std::vector<index_pair> passed;
  auto stats = all_pairs(scan, o, [&](std::span<const index_pair> ps) {
    passed.insert(passed.end(), ps.begin(), ps.end());
    return true;
  });
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_GT(stats->passes, 1u);
  std::sort(passed.begin(), passed.end(), by_ends);
  EXPECT_EQ(passed, want);
}

}  // namespace
}  // namespace simdup
