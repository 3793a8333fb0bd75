// The report's clusters: sizes counted into the summary, the largest picked with their members,
// the same from batch decisions and from stream mode's running bookkeeping.
#include <simdup/dedup.hpp>
#include <simdup/dedup_report.hpp>

#include "dedup/report_samples.hpp"

#include <gtest/gtest.h>

namespace simdup::detail {
namespace {

dedup_decision kept(uint32_t ordinal) {
  dedup_decision d;
  d.representative = ordinal;
  return d;
}

dedup_decision duplicate(uint32_t rep, dedup_layer layer, int8_t distance) {
  dedup_decision d;
  d.representative = rep;
  d.layer = layer;
  d.distance = distance;
  return d;
}

// Clusters {0, 1, 2, 4}, {3, 5}, {6}: 0's members are exact 1, near 2 at 2 bits, near 4 at 5.
std::vector<dedup_decision> decisions() {
  return {kept(0), duplicate(0, dedup_layer::exact, 0), duplicate(0, dedup_layer::near, 2),
          kept(3), duplicate(0, dedup_layer::near, 5),  duplicate(3, dedup_layer::url, 7),
          kept(6)};
}

TEST(ReportSamples, BatchCountsSizesAndShowsFarthestNearMembersFirst) {
  dedup_summary summary;
  const auto clusters = batch_sample_clusters(decisions(), summary, 1, 2);
  EXPECT_EQ(summary.cluster_sizes, (std::map<uint64_t, uint64_t>{{1, 1}, {2, 1}, {4, 1}}));
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].representative, 0u);
  EXPECT_EQ(clusters[0].size, 4u);
  EXPECT_EQ(clusters[0].members, (std::vector<uint32_t>{4, 2}));
}

TEST(ReportSamples, BatchTiesGoToTheEarlierRepresentative) {
  dedup_summary summary;
  const std::vector<dedup_decision> pairs = {kept(0), duplicate(0, dedup_layer::exact, 0), kept(2),
                                             duplicate(2, dedup_layer::exact, 0)};
  const auto clusters = batch_sample_clusters(pairs, summary, 10, 3);
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(clusters[0].representative, 0u);
  EXPECT_EQ(clusters[1].representative, 2u);
}

TEST(ReportSamples, StreamCountsTheSameSizesAndShowsFirstMembers) {
  const auto all = decisions();
  stream_clusters stream(2);
  dedup_summary summary;
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (all[i].kept(i)) {
      ++summary.kept;
    } else {
      stream.add_duplicate(i, all[i]);
    }
  }
  const auto clusters = stream.sample_clusters(summary, 10);
  EXPECT_EQ(summary.cluster_sizes, (std::map<uint64_t, uint64_t>{{1, 1}, {2, 1}, {4, 1}}));
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(clusters[0].representative, 0u);
  EXPECT_EQ(clusters[0].size, 4u);
  EXPECT_EQ(clusters[0].members, (std::vector<uint32_t>{1, 2}));  // in arrival order, capped
  EXPECT_EQ(clusters[1].representative, 3u);
  EXPECT_EQ(clusters[1].members, (std::vector<uint32_t>{5}));
  const auto members = stream.member_decisions();
  EXPECT_EQ(members.size(), 3u);
  EXPECT_EQ(members.at(2).distance, 2);
  EXPECT_EQ(members.at(5).layer, dedup_layer::url);
}

TEST(ReportSamples, CollectorCutsLongTextsAtACodePoint) {
  sample_collector samples({{0, 2, {1}}}, false);
  EXPECT_TRUE(samples.wants(0));
  EXPECT_TRUE(samples.wants(1));
  EXPECT_FALSE(samples.wants(2));
  EXPECT_EQ(samples.last(), 1u);
  document rep;
  rep.id = "a";
  rep.text = std::string(3999, 'y') + "\xC3\xA9" + "tail";  // é straddles byte 4000
  document member;
  member.id = "b";
  member.text = "short";
  samples.take(0, rep);
  samples.take(1, member);
  const auto built = samples.build([](uint32_t) { return duplicate(0, dedup_layer::near, 3); });
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].representative.text, std::string(3999, 'y') + " …");
  ASSERT_EQ(built[0].members.size(), 1u);
  EXPECT_EQ(built[0].members[0].id, "b");
  EXPECT_EQ(built[0].members[0].text, "short");
  EXPECT_EQ(built[0].members[0].distance, 3);
}

TEST(ReportSamples, HtmlDocumentsShowTheirTextNotTheirMarkup) {
  sample_collector samples({{0, 3, {1, 2}}}, false);
  document page;
  page.id = "page";
  page.text =
      "<html><head><style>p { color: red }</style><script>var x = 1 < 2;</script>"
      "</head><body><p>Fish &amp; chips</p><p>at <b>the</b> pier</p></body></html>";
  document plain;
  plain.id = "plain";
  plain.text = "<b>not a document tag</b>: plain text keeps its characters";
  document warc;  // a WARC response is HTML whatever it opens with
  warc.id = "warc";
  warc.text = "Hello <i>there</i>";
  warc.text_is_html = true;
  samples.take(0, page);
  samples.take(1, plain);
  samples.take(2, warc);
  const auto built = samples.build([](uint32_t) { return duplicate(0, dedup_layer::near, 1); });
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].representative.text, "Fish & chips at the pier");
  ASSERT_EQ(built[0].members.size(), 2u);
  EXPECT_EQ(built[0].members[0].text, plain.text);
  EXPECT_EQ(built[0].members[1].text, "Hello there");

  // With every text read as HTML (--html), so is the plain one.
  sample_collector all({{0, 2, {1}}}, true);
  all.take(0, plain);
  all.take(1, page);
  const auto html = all.build([](uint32_t) { return duplicate(0, dedup_layer::near, 1); });
  EXPECT_EQ(html[0].representative.text, "not a document tag: plain text keeps its characters");
}

TEST(ReportSamples, ALongHtmlDocumentIsReadFromItsStart) {
  sample_collector samples({{0, 2, {1}}}, false);
  document page;
  page.id = "big";
  // 2 MiB of markup whose first MiB is one script: the text after it is beyond what is read.
  page.text = "<html><body><script>" + std::string(std::size_t{1} << 20, 'x') +
              "</script><p>late text</p>" + std::string(std::size_t{1} << 20, ' ') + "</body>";
  document small;
  small.id = "small";
  small.text = "<p>Small &lt;page&gt;</p>";
  samples.take(0, page);
  samples.take(1, small);
  const auto built = samples.build([](uint32_t) { return duplicate(0, dedup_layer::near, 1); });
  EXPECT_EQ(built[0].representative.text, " …");
  EXPECT_EQ(built[0].members[0].text, "Small <page>");
}

}  // namespace
}  // namespace simdup::detail
