#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

namespace simdup {
namespace {

using test::read_string;

/// One WARC record with a correct Content-Length.
std::string warc_record(const std::string& version, const std::string& type, const std::string& id,
                        const std::string& uri, const std::string& block) {
  std::string r = version + "\r\nWARC-Type: " + type + "\r\nWARC-Record-ID: " + id +
                  "\r\nWARC-Date: 2024-03-01T10:00:00Z\r\n";
  if (!uri.empty()) r += "WARC-Target-URI: " + uri + "\r\n";
  r += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n" + block + "\r\n\r\n";
  return r;
}

const std::string kHttp =
    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><p>Hello &amp; bye</p></html>";

TEST(WarcReader, ResponseRecordsBecomeHtmlDocumentsWithoutHttpHeaders) {
  const std::string data =
      warc_record("WARC/1.0", "warcinfo", "<urn:uuid:0>", "", "software: test\r\n") +
      warc_record("WARC/1.0", "request", "<urn:uuid:1>", "http://a/", "GET / HTTP/1.1\r\n\r\n") +
      warc_record("WARC/1.0", "response", "<urn:uuid:2>", "http://a/", kHttp);
  auto r = read_string("x.warc", data);
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 1u);
  const document& d = r.docs[0];
  EXPECT_EQ(d.id, "<urn:uuid:2>");
  EXPECT_EQ(d.url, "http://a/");
  EXPECT_EQ(d.time, 1709287200);
  EXPECT_TRUE(d.text_is_html);
  EXPECT_EQ(d.text, "<html><p>Hello &amp; bye</p></html>");
  EXPECT_EQ(d.format, input_format::warc);
  const std::size_t start = data.find("WARC/1.0\r\nWARC-Type: response");
  EXPECT_EQ(d.offset, start);
  // raw is the record without the two CRLFs that end it.
  EXPECT_EQ(d.raw, data.substr(start, data.size() - start - 4));
}

TEST(WarcReader, WetConversionRecordsArePlainText) {
  const std::string text = "Plain text of the page.\nSecond line, 中文.";
  const std::string data =
      warc_record("WARC/1.1", "warcinfo", "<urn:uuid:w>", "", "x") +
      warc_record("WARC/1.1", "conversion", "<urn:uuid:c1>", "http://b/", text) +
      warc_record("WARC/1.1", "conversion", "<urn:uuid:c2>", "http://c/", "");
  auto r = read_string("x.warc.wet", data);
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].text, text);
  EXPECT_FALSE(r.docs[0].text_is_html);
  EXPECT_EQ(r.docs[1].id, "<urn:uuid:c2>");
  EXPECT_EQ(r.docs[1].text, "");
}

TEST(WarcReader, GarbageIsReportedThenReadingResumes) {
  const std::string good = warc_record("WARC/1.0", "conversion", "<urn:uuid:g>", "", "ok");
  auto r = read_string("g.warc", "junk line\nmore junk\r\n" + good);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].text, "ok");
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("g.warc:"), std::string::npos) << r.bad[0];
}

// A block over the record limit is one bad record, skipped whole: its lines are not taken for
// malformed WARC data, nor one that starts with "WARC/" for the next record (it was three bad
// records, the last a bogus record without Content-Length).
TEST(WarcReader, BlockOverTheLimitIsOneBadRecordSkippedWhole) {
  std::string big = "HTTP/1.1 200 OK\r\n\r\n<p>";
  for (int i = 0; i < 2000; ++i) big += "word ";
  big += "</p>\nWARC/1.0 quoted in the page\nmore page\n";
  const std::string data = warc_record("WARC/1.0", "response", "<urn:uuid:a>", "http://a/", kHttp) +
                           warc_record("WARC/1.0", "response", "<urn:uuid:b>", "http://b/", big) +
                           warc_record("WARC/1.0", "response", "<urn:uuid:c>", "http://c/", kHttp);
  reader_options limit;
  limit.max_record_bytes = 4096;
  auto r = read_string("big.warc", data, input_format::auto_detect, limit);
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[1].id, "<urn:uuid:c>");
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("exceeds the record limit"), std::string::npos) << r.bad[0];
}

TEST(WarcReader, TruncatedBlockIsABadRecord) {
  std::string data = warc_record("WARC/1.0", "conversion", "<urn:uuid:t>", "", "0123456789");
  data.resize(data.size() - 9);
  auto r = read_string("t.warc", data);
  EXPECT_TRUE(r.docs.empty());
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("truncated WARC record"), std::string::npos) << r.bad[0];
}

TEST(WarcReader, MissingContentLengthAndUnknownVersion) {
  const std::string good = warc_record("WARC/1.0", "conversion", "<urn:uuid:ok>", "", "fine");
  auto r = read_string("m.warc",
                       "WARC/1.0\r\nWARC-Type: conversion\r\n\r\n\r\n"
                       "WARC/2.0\r\nContent-Length: 0\r\n\r\n\r\n\r\n" +
                           good);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].text, "fine");
  ASSERT_EQ(r.bad.size(), 2u);
  EXPECT_NE(r.bad[0].find("Content-Length"), std::string::npos) << r.bad[0];
  EXPECT_NE(r.bad[1].find("unsupported WARC version"), std::string::npos) << r.bad[1];
}

TEST(WarcReader, RecordWithoutIdGetsOffsetId) {
  const std::string data =
      "WARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n";
  auto r = read_string("n.wet", data);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, "n.wet:0");
  EXPECT_TRUE(r.docs[0].id_generated);
}

TEST(WarcReader, MultiMemberGzipLikeCommonCrawl) {
  // Common Crawl compresses each record as its own gzip member.
  std::string data;
  for (int i = 0; i < 3; ++i) {
    data += test::gzip(warc_record("WARC/1.0", "response", "<urn:uuid:" + std::to_string(i) + ">",
                                   "http://s/" + std::to_string(i), kHttp));
  }
  auto r = read_string("cc.warc.gz", data);
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[2].url, "http://s/2");
}

}  // namespace
}  // namespace simdup
