// The detection profile (defaults, the one validation, effective()) and explain_pair.
#include <simdup/dedup.hpp>
#include <simdup/detection.hpp>
#include <simdup/keep_policy.hpp>
#include <simdup/minhash.hpp>
#include <simdup/verify.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace simdup {
namespace {

std::string message(const status& st) {
  return st ? std::string() : st.error().message;
}

TEST(DetectionProfile, DefaultsAreTheEvaluatedOnesAndValid) {
  const detection_profile p;
  EXPECT_EQ(p.k, 8);
  ASSERT_TRUE(p.verify);
  EXPECT_DOUBLE_EQ(p.verify->threshold, 0.8);
  EXPECT_EQ(p.verify->shingle_width, 5u);
  EXPECT_EQ(p.minhash.bands, 10u);
  EXPECT_EQ(p.minhash.rows, 6u);
  EXPECT_EQ(p.clustering, cluster_linking::anchored);
  EXPECT_DOUBLE_EQ(p.anchor_floor, 0.8);
  EXPECT_EQ(p.fingerprint.min_features, detection_min_features);
  EXPECT_TRUE(p.validate());
  // dedup_options carries the same profile.
  EXPECT_EQ(dedup_options{}.detection.k, 8);
}

TEST(DetectionProfile, KIsCheckedOnceAgainstWhatEveryConsumerSupports) {
  detection_profile p;
  for (int k : {0, 3, max_index_k}) {
    p.k = k;
    EXPECT_TRUE(p.validate()) << k;
  }
  p.k = max_index_k + 1;
  const status st = p.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::invalid_argument);
  EXPECT_EQ(message(st), "k must be in 0..32, got 33");
  p.k = -1;
  EXPECT_EQ(message(p.validate()), "k must be in 0..32, got -1");
  // The engines and the signer refuse it with the same message (no checks of their own).
  dedup_options o;
  o.detection.k = 40;
  EXPECT_EQ(batch_deduplicator::create(o).error().message, "k must be in 0..32, got 40");
  EXPECT_EQ(stream_deduplicator::create(o).error().message, "k must be in 0..32, got 40");
  EXPECT_EQ(document_signer::create(o).error().message, "k must be in 0..32, got 40");
}

TEST(DetectionProfile, MessagesNameTheParameter) {
  detection_profile p;
  p.anchor_floor = 1.5;
  EXPECT_EQ(message(p.validate()).rfind("anchor_floor must be in [0, 1]", 0), 0u);
  p = detection_profile{};
  p.verify->threshold = 0;
  EXPECT_EQ(message(p.validate()).rfind("verify threshold must be in (0, 1]", 0), 0u);
  p = detection_profile{};
  p.verify->shingle_width = 0;
  EXPECT_EQ(message(p.validate()), "verify shingle_width must be at least 1");
  p = detection_profile{};
  p.minhash.rows = 17;
  EXPECT_EQ(message(p.validate()).rfind("minhash must have at most 64 bands", 0), 0u);
  p = detection_profile{};
  p.fingerprint.min_features = 0;
  EXPECT_EQ(message(p.validate()), "min_features must be at least 1");
  // Combinations that cannot run: MinHash and anchoring need the verification's shingles.
  p = detection_profile{};
  p.verify.reset();
  EXPECT_EQ(message(p.validate()), "minhash candidates need verify");
  p.minhash = minhash_options{};
  EXPECT_EQ(message(p.validate()), "anchored clustering needs verify");
  p.clustering = cluster_linking::centers;
  EXPECT_TRUE(p.validate());  // centers cluster the pairs within k
  p.clustering = cluster_linking::star;
  EXPECT_TRUE(p.validate());
}

// What adapters word their own flags from (cli/options.cpp, simdup.dask's command line, the
// service's JSON errors): the setting's stable name, the value and what is allowed.
TEST(DetectionProfile, ErrorsCarryTheSettingAsData) {
  const auto parameter = [](const auto& st) {
    EXPECT_FALSE(st);
    EXPECT_TRUE(!st && st.error().parameter);
    return !st && st.error().parameter ? *st.error().parameter : parameter_info{};
  };
  detection_profile p;
  p.k = 33;
  parameter_info got = parameter(p.validate());
  EXPECT_EQ(got.name, "k");
  EXPECT_EQ(got.value, "33");
  EXPECT_EQ(got.allowed, "0..32");
  EXPECT_EQ(got.reason, "must be in 0..32, got 33");
  p = detection_profile{};
  p.verify->threshold = 1.5;
  got = parameter(p.validate());
  EXPECT_EQ(got.name, "verify.threshold");
  EXPECT_EQ(got.allowed, "(0, 1]");
  p = detection_profile{};
  p.verify->shingle_width = 0;
  got = parameter(p.validate());
  EXPECT_EQ(got.name, "verify.shingle_width");
  EXPECT_EQ(got.value, "0");
  p = detection_profile{};
  p.anchor_floor = -1;
  EXPECT_EQ(parameter(p.validate()).name, "anchor_floor");
  p = detection_profile{};
  p.fingerprint.min_features = 0;
  EXPECT_EQ(parameter(p.validate()).name, "min_features");
  p = detection_profile{};
  p.verify.reset();
  got = parameter(p.validate());
  EXPECT_EQ(got.name, "minhash");
  EXPECT_EQ(got.value, "10x6");
  EXPECT_EQ(got.needs, "verify");
  EXPECT_TRUE(got.allowed.empty());  // the value is fine; the combination is not
  p.minhash = minhash_options{};
  got = parameter(p.validate());
  EXPECT_EQ(got.name, "clustering");
  EXPECT_EQ(got.value, "anchored");
  EXPECT_EQ(got.needs, "verify");
  got = parameter(parse_linking("ring"));
  EXPECT_EQ(got.name, "clustering");
  EXPECT_EQ(got.value, "ring");
  EXPECT_EQ(got.allowed, "components, star, anchored or centers");
  dedup_options o;
  got = parameter(parse_layers("url,fuzzy", o));
  EXPECT_EQ(got.name, "layers");
  EXPECT_EQ(got.value, "fuzzy");
  EXPECT_EQ(got.allowed, "url, title, exact, near");
  got = parameter(parse_keep_policy("biggest"));
  EXPECT_EQ(got.name, "keep");
  EXPECT_EQ(got.value, "biggest");
  got = parameter(parse_minhash_spec("100x3"));
  EXPECT_EQ(got.name, "minhash");
  EXPECT_EQ(got.value, "100x3");
  got = parameter(parse_verify_spec("cosine"));
  EXPECT_EQ(got.name, "verify");
  EXPECT_EQ(got.value, "cosine");
}

TEST(DetectionProfile, EffectiveDropsWhatAModeCannotUse) {
  detection_profile p;
  EXPECT_EQ(p.effective(true).minhash.bands, 10u);
  EXPECT_EQ(p.effective(false).minhash.bands, 0u);  // stream mode probes SimHash only
  p.verify.reset();
  const detection_profile batch = p.effective(true);
  EXPECT_EQ(batch.minhash.bands, 0u);
  EXPECT_EQ(batch.clustering, cluster_linking::star);  // anchoring needs the shingles
  EXPECT_TRUE(batch.validate());
  p.clustering = cluster_linking::centers;
  EXPECT_EQ(p.effective(true).clustering, cluster_linking::centers);  // needs no shingles
  EXPECT_TRUE(p.effective(true).validate());
}

TEST(DetectionProfile, FingerprintsOnlyProfileAndItsSearch) {
  const auto p = detection_profile::for_fingerprints(5, cluster_linking::star);
  EXPECT_TRUE(p.validate());
  EXPECT_FALSE(p.verify);
  const all_pairs_options o = p.pair_search();
  EXPECT_EQ(o.layout.k, 5);
  EXPECT_TRUE(o.layout.widths.empty());  // planned for the input
  EXPECT_FALSE(detection_profile::for_fingerprints(33, cluster_linking::components).validate());
}

TEST(DetectionProfile, LinkingNamesAndLayers) {
  for (auto l : {cluster_linking::components, cluster_linking::star, cluster_linking::anchored,
                 cluster_linking::centers}) {
    EXPECT_EQ(parse_linking(linking_name(l)).value(), l);
  }
  EXPECT_EQ(parse_linking("stars").error().message,
            "clustering must be components, star, anchored or centers, got 'stars'");
  dedup_options o;
  ASSERT_TRUE(parse_layers("title,near", o));
  EXPECT_TRUE(o.title_layer && o.near_layer);
  EXPECT_FALSE(o.url_layer || o.content_layer);
  EXPECT_EQ(message(parse_layers("url,fuzzy", o)),
            "layers: unknown layer 'fuzzy' (url, title, exact, near)");
}

document doc(std::string text, std::string url = {}) {
  document d;
  d.text = std::move(text);
  d.url = std::move(url);
  return d;
}

constexpr const char* kText =
    "The harbour was closed on Tuesday after the storm damaged the northern breakwater, and "
    "the fishing fleet stayed in port while engineers inspected the damage along the pier.";

TEST(ExplainPair, HtmlPageAndItsTextAreTheSameContent) {
  const auto e =
      explain_pair(dedup_options{},
                   doc(std::string("<html><body><p>") + kText + "</p></body></html>"), doc(kText));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->a.html);
  EXPECT_FALSE(e->b.html);
  EXPECT_EQ(e->distance, 0);
  EXPECT_DOUBLE_EQ(e->jaccard, 1.0);
  EXPECT_TRUE(e->duplicate);
  EXPECT_EQ(e->layer, dedup_layer::exact);
}

// Verification compares the text the evaluation's truth defines (verify_normalize_options):
// punctuation counts in English; Chinese is compared by its content, so two editions are one.
TEST(ExplainPair, VerificationComparesTheDocumentedText) {
  std::string exclaimed = kText;
  for (char& c : exclaimed) c = c == ',' || c == '.' ? '!' : c;
  auto e = explain_pair(dedup_options{}, doc(kText), doc(exclaimed));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->layer, dedup_layer::exact);  // the exact layer ignores punctuation
  EXPECT_LT(e->jaccard, 1.0);
  EXPECT_GT(e->jaccard, 0.8);

  e = explain_pair(
      dedup_options{},
      doc("港口在週二因風暴損壞北防波堤而關閉，漁船留在港內。 工程師檢查碼頭的損壞情況。"),
      doc("港口在周二因风暴损坏北防波堤而关闭, 渔船留在港内.\n工程师检查码头的损坏情况."));
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->jaccard, 1.0);
  EXPECT_TRUE(e->duplicate);
}

TEST(ExplainPair, LayersInDedupsOrder) {
  dedup_options o;
  auto e = explain_pair(o, doc(kText, "http://www.a.com/x/"), doc("other text", "https://a.com/x"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->layer, dedup_layer::url);
  EXPECT_TRUE(e->duplicate);
  // "other text" has fewer than 10 distinct shingles: short, no fingerprint, no near link.
  EXPECT_EQ(e->distance, -1);
  EXPECT_TRUE(std::isnan(e->jaccard));
  o.url_layer = false;
  e = explain_pair(o, doc(kText, "http://a.com/x"), doc("other text", "http://a.com/x"));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->duplicate);
  EXPECT_EQ(e->layer, dedup_layer::none);
}

TEST(ExplainPair, NearPairsAreVerifiedAgainstTheThreshold) {
  std::string edited = kText;
  edited.replace(edited.find("Tuesday"), 7, "Monday");
  dedup_options o;
  o.detection.k = max_index_k;  // a candidate whatever the distance
  auto e = explain_pair(o, doc(kText), doc(edited));
  ASSERT_TRUE(e);
  ASSERT_GT(e->jaccard, 0.8);
  ASSERT_LT(e->jaccard, 1.0);
  EXPECT_TRUE(e->duplicate);
  EXPECT_EQ(e->layer, dedup_layer::near);
  o.detection.verify->threshold = 0.999;
  e = explain_pair(o, doc(kText), doc(edited));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->duplicate);
  EXPECT_NE(e->reason.find("verify threshold"), std::string::npos) << e->reason;
  // Anchored clusters also need the anchor floor with the representative; centers do not.
  o.detection.verify->threshold = 0.5;
  o.detection.anchor_floor = 0.999;
  o.detection.clustering = cluster_linking::centers;
  e = explain_pair(o, doc(kText), doc(edited));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->duplicate) << e->reason;
  o.detection.clustering = cluster_linking::anchored;
  e = explain_pair(o, doc(kText), doc(edited));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->duplicate);
  EXPECT_NE(e->reason.find("anchor floor"), std::string::npos) << e->reason;
  // k 0 and no MinHash: not a candidate at all.
  o = dedup_options{};
  o.detection.k = 0;
  o.detection.minhash = minhash_options{};
  e = explain_pair(o, doc(kText), doc(edited));
  ASSERT_TRUE(e);
  ASSERT_GT(e->distance, 0);
  EXPECT_FALSE(e->duplicate);
  EXPECT_NE(e->reason.find("not a candidate"), std::string::npos) << e->reason;
}

}  // namespace
}  // namespace simdup
