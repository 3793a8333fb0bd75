#include <gtest/gtest.h>
#include <simdup/fingerprint.hpp>

#include "features/golden_io.hpp"

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace simdup {
namespace {

using testing::field;
using testing::hex64;

fingerprinter make(const fingerprint_options& o) {
  auto fp = fingerprinter::create(o);
  EXPECT_TRUE(fp) << fp.error().message;
  return std::move(*fp);
}

// Every normalisation step off, so the text reaches the extractor unchanged.
fingerprint_options raw_options() {
  fingerprint_options o;
  o.normalize.nfkc = false;
  o.normalize.casefold = false;
  o.normalize.t2s = false;
  o.normalize.strip_punctuation = false;
  o.normalize.collapse_whitespace = false;
  return o;
}

hash_kind parse_kind(const std::string& s) {
  if (s == "fnv1a") return hash_kind::fnv1a;
  if (s == "md5") return hash_kind::md5;
  return hash_kind::xxh3;
}

// Vectors from tests/data/golden/gen_default_simhash.py (xxh3 via xxhsum).
TEST(Fingerprinter, DefaultPipelineMatchesGoldenVectors) {
  std::size_t checked = 0;
  testing::for_each_golden_row("default_simhash.jsonl", [&](simdjson::dom::element row) {
    std::string_view text;
    if (row["text"].get(text)) return;
    fingerprint_options o = raw_options();
    o.features.shingle_width = static_cast<std::size_t>(row["width"].get_uint64().value());
    o.hash = parse_kind(field(row, "hash"));
    const auto r = make(o).fingerprint(text);
    EXPECT_EQ(r.status, fingerprint_status::ok);
    EXPECT_EQ(to_hex(r.fingerprint), field(row, "fingerprint"))
        << text << " width " << o.features.shingle_width << " " << field(row, "hash");
    // The general (map-based) path must agree with the streaming one.
    o.weighting.top_k = 1u << 30;
    EXPECT_EQ(to_hex(make(o).fingerprint(text).fingerprint), field(row, "fingerprint")) << text;
    ++checked;
  });
  EXPECT_GE(checked, 40u);
}

// The default options on text the normaliser leaves as is. The value is the golden vector of
// this text (xxh3 via xxhsum, width 4), so any change to the default pipeline shows here.
TEST(Fingerprinter, DefaultModeIsStable) {
  const auto fp = make({});
  const auto r = fp.fingerprint("the quick brown fox jumps over the lazy dog");
  ASSERT_EQ(r.status, fingerprint_status::ok);
  EXPECT_EQ(to_hex(r.fingerprint), "89b0a50054201514");
  EXPECT_EQ(r.features, 40u);  // 43 code points -> 40 shingle occurrences
  // Normalisation makes case, punctuation and spacing irrelevant.
  EXPECT_EQ(fp.fingerprint("The QUICK brown fox,  jumps over... the lazy dog!").fingerprint,
            r.fingerprint);
}

TEST(Fingerprinter, EmptyAndPunctuationOnlyAreTooShort) {
  const auto fp = make({});
  for (const char* text : {"", "   ", "!!! ... ???", "\t\n"}) {
    const auto r = fp.fingerprint(text);
    EXPECT_EQ(r.status, fingerprint_status::too_short) << text;
    EXPECT_EQ(r.features, 0u);
  }
  EXPECT_EQ(fp.fingerprint("a").status, fingerprint_status::ok);
}

TEST(Fingerprinter, MinFeaturesCountsDistinctFeatures) {
  fingerprint_options o;
  o.min_features = 3;
  const auto fp = make(o);
  // "aaaaaaa": 4 shingle occurrences, 1 distinct.
  EXPECT_EQ(fp.fingerprint("aaaaaaa").status, fingerprint_status::too_short);
  EXPECT_EQ(fp.fingerprint("abcdef").status, fingerprint_status::ok);  // 3 distinct
  EXPECT_EQ(fp.fingerprint("abcde").status, fingerprint_status::too_short);
  o.min_features = 0;
  EXPECT_EQ(fingerprinter::create(o).error().code, errc::invalid_argument);
}

TEST(Fingerprinter, NearDuplicatesAreCloseAndUnrelatedTextsFar) {
  const auto fp = make({});
  const std::string a =
      "The committee met on Tuesday to discuss the new budget for the public library, which "
      "has been underfunded for several years. Members agreed to increase spending on books "
      "and digital resources, and to extend opening hours on weekends.";
  std::string b = a;
  b.replace(b.find("Tuesday"), 7, "Wednesday");
  b += " The vote was unanimous.";
  const std::string c =
      "Heavy rain is expected across the northern mountains tonight, with flooding possible "
      "in low valleys; drivers should avoid the coastal road until the storm passes.";
  const uint64_t fa = fp.fingerprint(a).fingerprint;
  EXPECT_LE(hamming_distance(fa, fp.fingerprint(b).fingerprint), 8);
  EXPECT_GE(hamming_distance(fa, fp.fingerprint(c).fingerprint), 16);
}

TEST(Fingerprinter, WordsAndNgrams) {
  fingerprint_options o = raw_options();
  o.features.kind = feature_kind::words;
  const auto words = make(o);
  const auto f = words.features("b a b c");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].text, "b");
  EXPECT_EQ(f[0].weight, 2);
  // Word order does not matter to bag-of-words fingerprints.
  EXPECT_EQ(words.fingerprint("x y z").fingerprint, words.fingerprint("z, y x").fingerprint);
  EXPECT_EQ(words.fingerprint("x y z").features, 3u);

  o.features.kind = feature_kind::word_ngrams;
  o.features.ngram = 2;
  const auto grams = make(o);
  const auto g = grams.features("x y z");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].text, "x y");
  EXPECT_EQ(g[1].text, "y z");
  EXPECT_NE(grams.fingerprint("x y z").fingerprint, grams.fingerprint("z y x").fingerprint);
  // The fingerprint is the vote of exactly these features.
  std::vector<weighted_feature> supplied{{"x y", 1}, {"y z", 1}};
  EXPECT_EQ(grams.fingerprint("x y z").fingerprint,
            grams.fingerprint_features(supplied).fingerprint);
}

TEST(Fingerprinter, SuppliedFeaturesUseTheConfiguredHash) {
  const auto fp = make({});
  const std::vector<weighted_feature> one{{"token", 2.5}};
  const auto r = fp.fingerprint_features(one);
  EXPECT_EQ(r.status, fingerprint_status::ok);
  EXPECT_EQ(r.fingerprint, hash_feature(hash_kind::xxh3, "token"));
  EXPECT_EQ(fp.fingerprint_features({}).status, fingerprint_status::too_short);
}

TEST(Fingerprinter, TfidfNeedsAnExistingIdfFile) {
  fingerprint_options o;
  o.features.kind = feature_kind::words;
  o.weighting.scheme = weighting_scheme::tfidf;
  o.weighting.idf_path = "/nonexistent/simdup/idf.txt";
  auto fp = fingerprinter::create(o);
  ASSERT_FALSE(fp);
  EXPECT_EQ(fp.error().code, errc::not_found);
  EXPECT_NE(fp.error().message.find(o.weighting.idf_path), std::string::npos);
}

TEST(Fingerprinter, InvalidOptionsAreErrors) {
  fingerprint_options o;
  o.features.shingle_width = 0;
  EXPECT_EQ(fingerprinter::create(o).error().code, errc::invalid_argument);
  o = {};
  o.features.kind = feature_kind::word_ngrams;
  o.features.ngram = 0;
  EXPECT_EQ(fingerprinter::create(o).error().code, errc::invalid_argument);
}

// Without a segmenter the jieba dictionary is loaded; a missing one is an error naming it.
TEST(Fingerprinter, JiebaKindsNeedTheirDictionary) {
  for (auto kind : {feature_kind::jieba, feature_kind::keywords}) {
    fingerprint_options o;
    o.features.kind = kind;
    o.features.jieba_dict = "/nonexistent/jieba";
    auto fp = fingerprinter::create(o);
    ASSERT_FALSE(fp);
    EXPECT_EQ(fp.error().code, errc::not_found);
    EXPECT_NE(fp.error().message.find("/nonexistent/jieba/jieba.bin"), std::string::npos);
  }
  fingerprint_options o;
  o.compat = compat_mode::jieba_tfidf;
  o.features.jieba_dict = "/nonexistent/jieba";
  EXPECT_EQ(fingerprinter::create(o).error().code, errc::not_found);
}

// Any segmenter plugs into the token -> weighted features step.
class space_segmenter final : public segmenter {
 public:
  void segment(std::string_view text, std::vector<std::string_view>& words) const override {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find(' ', start), text.size());
      words.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
};

TEST(Fingerprinter, SegmenterTokensAreFilteredAndWeighted) {
  fingerprint_options o = raw_options();
  o.features.kind = feature_kind::jieba;
  o.features.segmenter = std::make_shared<space_segmenter>();
  o.features.min_token_length = 2;
  const auto fp = make(o);
  const auto f = fp.features("ab c ab  de");
  ASSERT_EQ(f.size(), 2u);  // "c" is too short, "" is dropped
  EXPECT_EQ(f[0].text, "ab");
  EXPECT_EQ(f[0].weight, 2);
  EXPECT_EQ(f[1].text, "de");
  std::vector<weighted_feature> supplied{{"ab", 1}, {"ab", 1}, {"de", 1}};
  EXPECT_EQ(fp.fingerprint("ab c ab  de").fingerprint,
            fp.fingerprint_features(supplied).fingerprint);
}

TEST(Fingerprinter, ConcurrentCallsAgree) {
  const auto fp = make({});
  fingerprint_options c;
  c.compat = compat_mode::python_simhash;
  const auto compat = make(c);
  std::vector<std::string> texts;
  for (int i = 0; i < 50; ++i)
    texts.push_back("document number " + std::to_string(i) + " about topic " +
                    std::to_string(i % 7) + " 中文内容 " +
                    std::string(static_cast<std::size_t>(i), 'x'));
  std::vector<uint64_t> expected, expected_compat;
  for (const auto& t : texts) {
    expected.push_back(fp.fingerprint(t).fingerprint);
    expected_compat.push_back(compat.fingerprint(t).fingerprint);
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (std::size_t i = 0; i < texts.size(); ++i) {
          mismatches[t] += fp.fingerprint(texts[i]).fingerprint != expected[i];
          mismatches[t] += compat.fingerprint(texts[i]).fingerprint != expected_compat[i];
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Fingerprinter, BatchMatchesSingleCalls) {
  const auto fp = make({});
  const std::vector<std::string_view> texts{"first text here", "", "second text"};
  std::vector<fingerprint_result> out(texts.size());
  fp.fingerprint_batch(texts, out);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(out[i].fingerprint, fp.fingerprint(texts[i]).fingerprint);
    EXPECT_EQ(out[i].status, fp.fingerprint(texts[i]).status);
  }
}

}  // namespace
}  // namespace simdup
