// A run's outputs read back. summary.json (read_summary_parameters): what describe_parameters
// and summary_json record comes back as the same options; older summaries keep the base's
// values; each malformed key is named. duplicates.jsonl (read_duplicate_records): the lines of
// docs/formats.md come back record by record, ids as written; a bad line is named.
#include <simdup/dedup_report.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace simdup {
namespace {

// Every setting summary.json records, away from its default.
dedup_options options_unlike_defaults() {
  dedup_options o;
  o.mode = dedup_mode::batch;
  o.url_layer = true;
  o.title_layer = true;
  o.content_layer = false;
  o.near_layer = true;
  detection_profile& p = o.detection;
  p.k = 5;
  p.clustering = cluster_linking::anchored;
  p.anchor_floor = 0.7;
  p.minhash = {.bands = 8, .rows = 3};
  p.verify = verify_options{.threshold = 0.65, .shingle_width = 4, .max_hashes = 64};
  fingerprint_options& f = p.fingerprint;
  f.normalize.html = true;
  f.normalize.nfkc = false;
  f.normalize.casefold = false;
  f.normalize.t2s = false;
  f.normalize.strip_punctuation = false;
  f.normalize.strip_digits = true;
  f.features.kind = feature_kind::word_ngrams;
  f.features.shingle_width = 3;
  f.features.ngram = 3;
  f.features.min_token_length = 2;
  f.features.jieba_dict = "dict.txt";
  f.features.jieba_user_dicts = {"user1.txt", "user \"2\".txt"};
  f.weighting.scheme = weighting_scheme::tfidf;
  f.weighting.idf_path = "idf.txt";
  f.weighting.stopwords_path = "stop.txt";
  f.weighting.top_k = 50;
  f.hash = hash_kind::fnv1a;
  f.compat = compat_mode::none;
  f.min_features = 7;
  return o;
}

std::string summary_of(const dedup_options& o, std::vector<std::string> inputs) {
  dedup_summary s;
  describe_parameters(s, o, "first", 1);
  s.inputs = std::move(inputs);
  s.output_format = "jsonl";
  return summary_json(s);
}

void expect_same_summary_fingerprint(const fingerprint_options& a, const fingerprint_options& b) {
  EXPECT_EQ(a.normalize.html, b.normalize.html);
  EXPECT_EQ(a.normalize.nfkc, b.normalize.nfkc);
  EXPECT_EQ(a.normalize.casefold, b.normalize.casefold);
  EXPECT_EQ(a.normalize.t2s, b.normalize.t2s);
  EXPECT_EQ(a.normalize.strip_punctuation, b.normalize.strip_punctuation);
  EXPECT_EQ(a.normalize.strip_digits, b.normalize.strip_digits);
  EXPECT_EQ(a.features.kind, b.features.kind);
  EXPECT_EQ(a.features.shingle_width, b.features.shingle_width);
  EXPECT_EQ(a.features.ngram, b.features.ngram);
  EXPECT_EQ(a.features.min_token_length, b.features.min_token_length);
  EXPECT_EQ(a.features.jieba_dict, b.features.jieba_dict);
  EXPECT_EQ(a.features.jieba_user_dicts, b.features.jieba_user_dicts);
  EXPECT_EQ(a.weighting.scheme, b.weighting.scheme);
  EXPECT_EQ(a.weighting.idf_path, b.weighting.idf_path);
  EXPECT_EQ(a.weighting.stopwords_path, b.weighting.stopwords_path);
  EXPECT_EQ(a.weighting.top_k, b.weighting.top_k);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.compat, b.compat);
  EXPECT_EQ(a.min_features, b.min_features);
}

void expect_same_summary_options(const dedup_options& a, const dedup_options& b) {
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.url_layer, b.url_layer);
  EXPECT_EQ(a.title_layer, b.title_layer);
  EXPECT_EQ(a.content_layer, b.content_layer);
  EXPECT_EQ(a.near_layer, b.near_layer);
  const detection_profile &p = a.detection, &q = b.detection;
  EXPECT_EQ(p.k, q.k);
  EXPECT_EQ(p.clustering, q.clustering);
  EXPECT_EQ(p.anchor_floor, q.anchor_floor);
  EXPECT_EQ(p.minhash.bands, q.minhash.bands);
  EXPECT_EQ(p.minhash.rows, q.minhash.rows);
  ASSERT_EQ(p.verify.has_value(), q.verify.has_value());
  if (p.verify) {
    EXPECT_EQ(p.verify->threshold, q.verify->threshold);
    EXPECT_EQ(p.verify->max_hashes, q.verify->max_hashes);
    EXPECT_EQ(p.verify->shingle_width, q.verify->shingle_width);
  }
  expect_same_summary_fingerprint(p.fingerprint, q.fingerprint);
}

TEST(SummaryRead, EveryRecordedSettingComesBack) {
  const dedup_options run = options_unlike_defaults();
  const std::string json = summary_of(run, {"a.jsonl", "dir/b*.jsonl.gz"});
  auto read = read_summary_parameters(json, "out/summary.json", dedup_options{});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->inputs, (std::vector<std::string>{"a.jsonl", "dir/b*.jsonl.gz"}));
  expect_same_summary_options(read->options, run);
}

TEST(SummaryRead, TheDefaultsComeBackOverOtherBaseValues) {
  const std::string json = summary_of(dedup_options{}, {"in.jsonl"});
  auto read = read_summary_parameters(json, "summary.json", options_unlike_defaults());
  ASSERT_TRUE(read) << read.error().message;
  expect_same_summary_options(read->options, dedup_options{});
}

TEST(SummaryRead, OffSettingsReadAsOff) {
  dedup_options run;
  run.detection.verify.reset();
  run.detection.minhash = minhash_options{};
  run.detection.clustering = cluster_linking::components;
  const std::string json = summary_of(run, {});
  // The base verifies with MinHash: the run's nulls turn both off.
  auto read = read_summary_parameters(json, "summary.json", dedup_options{});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(read->inputs.empty());
  EXPECT_FALSE(read->options.detection.verify);
  EXPECT_EQ(read->options.detection.minhash.bands, 0u);
  EXPECT_EQ(read->options.detection.clustering, cluster_linking::components);
}

TEST(SummaryRead, AStreamRunReadsAsTheStarItLinked) {
  dedup_options run;
  run.mode = dedup_mode::stream;
  const std::string json = summary_of(run, {"in.jsonl"});
  auto read = read_summary_parameters(json, "summary.json", dedup_options{});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->options.mode, dedup_mode::stream);
  // Stream mode records the clusters it made (a star) and no MinHash (a batch generator).
  EXPECT_EQ(read->options.detection.clustering, cluster_linking::star);
  EXPECT_EQ(read->options.detection.minhash.bands, 0u);
  ASSERT_TRUE(read->options.detection.verify);
  EXPECT_EQ(read->options.detection.verify->threshold, 0.8);
}

TEST(SummaryRead, WhatAnOlderSummaryDoesNotRecordKeepsTheBaseValue) {
  // Before the fingerprint settings: no parameters.fingerprint, no verify.shingle_width, no
  // anchor_floor.
  const std::string json = R"({"version": 1, "parameters": {"inputs": ["old.jsonl"],
      "mode": "batch", "k": 6, "keep": "first", "linking": "anchored", "minhash": null,
      "layers": ["url", "exact", "near"], "verify": {"jaccard": 0.75, "max_hashes": 0}}})";
  const dedup_options base = options_unlike_defaults();
  auto read = read_summary_parameters(json, "summary.json", base);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->inputs, std::vector<std::string>{"old.jsonl"});
  const detection_profile& p = read->options.detection;
  EXPECT_EQ(p.k, 6);
  EXPECT_EQ(p.minhash.bands, 0u);
  ASSERT_TRUE(p.verify);
  EXPECT_EQ(p.verify->threshold, 0.75);
  EXPECT_EQ(p.verify->max_hashes, 0u);
  EXPECT_EQ(p.verify->shingle_width, 4u);  // the base's
  EXPECT_EQ(p.anchor_floor, 0.7);          // the base's
  EXPECT_FALSE(read->options.title_layer);
  expect_same_summary_fingerprint(p.fingerprint, base.detection.fingerprint);
}

// `json` with the first `from` replaced by `to` (which must be there).
std::string summary_with(std::string json, const std::string& from, const std::string& to) {
  const std::size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) json.replace(at, from.size(), to);
  return json;
}

std::string summary_read_error(const std::string& json) {
  auto read = read_summary_parameters(json, "out/summary.json", dedup_options{});
  if (read) return "(read)";
  EXPECT_EQ(read.error().code, errc::invalid_input);
  return read.error().message;
}

TEST(SummaryRead, NamesTheFileAndTheMalformedParameter) {
  const std::string good = summary_of(options_unlike_defaults(), {"a.jsonl"});
  ASSERT_EQ(summary_read_error(good), "(read)");
  EXPECT_EQ(summary_read_error(""), "out/summary.json has no parameters");
  EXPECT_EQ(summary_read_error("{\"version\": 1}"), "out/summary.json has no parameters");
  EXPECT_EQ(summary_read_error(good.substr(0, good.size() / 2)),
            "out/summary.json has no parameters");
  const auto malformed = [](const std::string& key) {
    return "out/summary.json: parameters." + key + " missing or malformed";
  };
  EXPECT_EQ(summary_read_error(summary_with(good, "\"inputs\":[\"a.jsonl\"]", "\"inputs\":[1]")),
            malformed("inputs"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"mode\":", "\"modus\":")), malformed("mode"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"k\":5", "\"k\":\"5\"")), malformed("k"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"anchored\"", "\"ring\"")),
            malformed("linking"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"title\"", "\"body\"")), malformed("layers"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"rows\":3", "\"rowz\":3")),
            malformed("minhash"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"jaccard\"", "\"cosine\"")),
            malformed("verify"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"fnv1a\"", "\"sha1\"")),
            malformed("fingerprint"));
  EXPECT_EQ(summary_read_error(
                summary_with(good, "\"user_dicts\":[\"user1.txt\"", "\"user_dicts\":[true")),
            malformed("fingerprint"));
  EXPECT_EQ(summary_read_error(summary_with(good, "\"min_features\"", "\"min_feature\"")),
            malformed("fingerprint"));
  // Well formed but out of range: the profile's own check, after the file's name.
  EXPECT_EQ(summary_read_error(summary_with(good, "\"k\":5", "\"k\":40")),
            "out/summary.json: k must be in 0..32, got 40");
}

// A file of `text` in the test's temporary directory, removed with it.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text)
      : path(testing::TempDir() + "duplicates-" + std::to_string(getpid()) + ".jsonl") {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~temp_file() { std::remove(path.c_str()); }
};

TEST(DuplicateRecords, EachLineComesBackWithItsIdsAsWritten) {
  const temp_file file(
      "{\"id\":\"b\",\"duplicate_of\":\"a\",\"cluster\":0,\"distance\":2,\"layer\":\"near\","
      "\"jaccard\":0.91}\n"
      "\n"
      "{\"id\":18446744073709551615,\"duplicate_of\":1.50,\"cluster\":3,\"distance\":null,"
      "\"layer\":\"exact\"}\n"
      "{\"id\":\"c\\u00e9\",\"duplicate_of\":\"doc-7\",\"cluster\":null,\"against\":\"runs/"
      "2026-10\",\"distance\":0,\"layer\":\"url\"}\n");
  std::vector<duplicate_record> got;
  ASSERT_TRUE(
      read_duplicate_records(file.path, [&](const duplicate_record& r) { got.push_back(r); }));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id, "b");
  EXPECT_EQ(got[0].duplicate_of, "a");
  EXPECT_EQ(got[0].layer, "near");
  EXPECT_EQ(got[0].against, "");
  EXPECT_EQ(got[1].id, "18446744073709551615");
  EXPECT_EQ(got[1].duplicate_of, "1.50");
  EXPECT_EQ(got[1].layer, "exact");
  EXPECT_EQ(got[2].id, "c\u00e9");
  EXPECT_EQ(got[2].against, "runs/2026-10");
  EXPECT_EQ(got[2].layer, "url");
}

TEST(DuplicateRecords, AMalformedLineIsNamedAndAMissingFileIsNotFound) {
  const temp_file file(
      "{\"id\":\"b\",\"duplicate_of\":\"a\",\"layer\":\"near\"}\n{\"id\":\"c\",\"layer\":\"near\"}"
      "\n");
  int seen = 0;
  const auto st = read_duplicate_records(file.path, [&](const duplicate_record&) { ++seen; });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::invalid_input);
  EXPECT_EQ(st.error().message,
            file.path + ":2: not a duplicates record (id, duplicate_of, layer)");
  EXPECT_EQ(seen, 1);
  const auto missing = read_duplicate_records(file.path + ".none", [](const auto&) {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::not_found);
}

}  // namespace
}  // namespace simdup
