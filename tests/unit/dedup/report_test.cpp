#include <simdup/dedup_report.hpp>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>

namespace simdup {
namespace {

TEST(HtmlEscape, EscapesMarkupAndRepairsBytes) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("中文 ok\n"), "中文 ok\n");
  EXPECT_EQ(html_escape("bad\xFF!"), "bad\xEF\xBF\xBD!");
  EXPECT_EQ(html_escape(std::string("a\x01") + "b"),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(DiffHtml, MarksOnlyTheChangedTokens) {
  const auto [left, right] = diff_html("the quick brown fox", "the slow brown fox");
  EXPECT_EQ(left, "the <del>quick</del> brown fox");
  EXPECT_EQ(right, "the <ins>slow</ins> brown fox");
}

TEST(DiffHtml, IgnoresAsciiCase) {
  const auto [left, right] = diff_html("The Fox.", "THE fox!");
  EXPECT_EQ(left, "The Fox<del>.</del>");
  EXPECT_EQ(right, "THE fox<ins>!</ins>");
}

TEST(DiffHtml, ComparesChineseByCharacterAndEscapes) {
  const auto [left, right] = diff_html("今天天气很好<b>", "今天天气不好<b>");
  EXPECT_EQ(left, "今天天气<del>很</del>好&lt;b&gt;");
  EXPECT_EQ(right, "今天天气<ins>不</ins>好&lt;b&gt;");
}

TEST(DiffHtml, TextBeyondTheTokenLimitIsShownUnmarked) {
  const auto [left, right] = diff_html("a b c d", "a x c d", 3);
  EXPECT_EQ(left, "a <del>b</del> c d");
  EXPECT_EQ(right, "a <ins>x</ins> c d");
  const auto [l2, r2] = diff_html("", "new");
  EXPECT_EQ(l2, "");
  EXPECT_EQ(r2, "<ins>new</ins>");
}

dedup_summary sample_summary() {
  dedup_summary s;
  s.inputs = {"a.jsonl", "b<script>.jsonl"};
  s.mode = "batch";
  s.keep = "first";
  s.linking = "components";
  s.layers = {"url", "exact", "near"};
  s.output_format = "jsonl";
  s.read = 10;
  s.skipped = 1;
  s.skipped_reasons["invalid_input"] = 1;
  s.bytes = 2'000'000;
  s.seconds_total = 0.5;
  dedup_decision kept;
  kept.representative = 0;
  count_decision(s, kept, 0);
  for (uint32_t i = 1; i < 9; ++i) {
    dedup_decision d;
    d.representative = 0;
    d.layer = i < 3 ? dedup_layer::exact : dedup_layer::near;
    d.distance = static_cast<int8_t>(i < 3 ? -1 : i % 4);
    count_decision(s, d, i);
  }
  s.cluster_sizes[9] = 1;
  cluster_sample c;
  c.cluster = 0;
  c.size = 9;
  c.representative = {"doc-0", "the <quick> fox", dedup_layer::none, -1, NAN};
  c.members.push_back({"doc-3", "the <slow> fox", dedup_layer::near, 3, 0.5});
  s.samples.push_back(c);
  return s;
}

TEST(Summary, CountsAddUpAndJsonIsValid) {
  const dedup_summary s = sample_summary();
  EXPECT_EQ(s.kept, 1u);
  EXPECT_EQ(s.duplicates, 8u);
  EXPECT_EQ(s.kept + s.duplicates + s.skipped, s.read);
  EXPECT_EQ(s.by_layer[static_cast<int>(dedup_layer::near)], 6u);
  EXPECT_EQ(s.distance_histogram[65], 2u);

  const std::string text = summary_json(s);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  EXPECT_EQ(uint64_t(doc["documents"]["read"]), 10u);
  EXPECT_EQ(uint64_t(doc["documents"]["duplicates"]), 8u);
  EXPECT_EQ(uint64_t(doc["duplicates_by_layer"]["exact"]), 2u);
  EXPECT_EQ(uint64_t(doc["distance_histogram"]["3"]), 2u);
  EXPECT_EQ(uint64_t(doc["clusters"]["by_size"]["9"]), 1u);
  EXPECT_EQ(uint64_t(doc["clusters"]["largest"]), 9u);
  EXPECT_DOUBLE_EQ(double(doc["timings"]["mb_per_second"]), 4.0);
  EXPECT_TRUE(doc["parameters"]["verify"].is_null());

  const std::string human = human_summary(s);
  EXPECT_NE(human.find("10 documents read"), std::string::npos) << human;
  EXPECT_NE(human.find("near 6"), std::string::npos) << human;
}

TEST(Report, IsSelfContainedAndEscaped) {
  const std::string html = report_html(sample_summary());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("b&lt;script&gt;.jsonl"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("<del>quick</del>"), std::string::npos);
  EXPECT_NE(html.find("<ins>slow</ins>"), std::string::npos);
  EXPECT_NE(html.find("Jaccard 0.500"), std::string::npos);
}

}  // namespace
}  // namespace simdup
