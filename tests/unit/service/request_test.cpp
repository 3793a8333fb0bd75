#include <gtest/gtest.h>

#include "service/request.hpp"

namespace simdup::detail {
namespace {

TEST(ServiceRequest, SingleDocumentWithFingerprintAndTime) {
  auto r = parse_request(
      R"({"id":"a","fingerprint":"00000000000000FF","time":1700000000,"url":"x"})", {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->batch);
  ASSERT_EQ(r->docs.size(), 1u);
  EXPECT_EQ(r->docs[0].id, "a");
  EXPECT_EQ(r->docs[0].fingerprint, 0xffu);
  EXPECT_EQ(r->docs[0].time, 1700000000);
}

TEST(ServiceRequest, BatchWithTextAndIntegerIds) {
  auto r = parse_request(R"({"documents":[{"id":7,"text":"hello"},{"id":"b","text":""}]})", {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->batch);
  ASSERT_EQ(r->docs.size(), 2u);
  EXPECT_EQ(r->docs[0].id, "7");
  EXPECT_EQ(r->docs[0].text, "hello");
  EXPECT_FALSE(r->docs[0].fingerprint.has_value());
  EXPECT_FALSE(r->docs[0].time.has_value());
}

TEST(ServiceRequest, ErrorsNameTheDocumentAndField) {
  auto r = parse_request(R"({"documents":[{"id":"a","fingerprint":"0000000000000000"},
                             {"id":"b","fingerprint":"xyz"}]})",
                         {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::invalid_input);
  EXPECT_NE(r.error().message.find("documents[1]"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("fingerprint"), std::string::npos);
}

TEST(ServiceRequest, RejectsMalformedBodies) {
  for (const char* body :
       {"", "{", "null", "[]", "{\"documents\":[]}", "{\"documents\":3}",
        "{\"id\":\"\",\"text\":\"x\"}", "{\"id\":true,\"text\":\"x\"}", "{\"id\":\"a\"}",
        "{\"id\":\"a\",\"text\":1}",
        "{\"id\":\"a\",\"text\":\"x\",\"fingerprint\":\"0000000000000000\"}",
        "{\"id\":\"a\",\"text\":\"x\",\"time\":1.5}", "{\"id\":\"a\",\"text\":\"x\"} trailing"}) {
    auto r = parse_request(body, {});
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, errc::invalid_input) << body;
  }
}

TEST(ServiceRequest, FingerprintsAsUnsignedIntegers) {
  auto r = parse_request(R"({"documents":[{"id":"a","fingerprint":18364758544493064720},
                                          {"id":"b","fingerprint":0},
                                          {"id":"c","fingerprint":"FEDCBA9876543210"}]})",
                         {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->docs[0].fingerprint, uint64_t{0xFEDCBA9876543210});
  EXPECT_EQ(r->docs[1].fingerprint, uint64_t{0});
  EXPECT_EQ(r->docs[2].fingerprint, r->docs[0].fingerprint);
  for (const char* body :
       {R"({"id":"a","fingerprint":-1})", R"({"id":"a","fingerprint":1.5})",
        R"({"id":"a","fingerprint":18446744073709551616})", R"({"id":"a","fingerprint":true})"}) {
    auto bad = parse_request(body, {});
    ASSERT_FALSE(bad) << body;
    EXPECT_EQ(bad.error().code, errc::invalid_input) << body;
  }
}

TEST(ServiceRequest, RepairsInvalidUtf8LikeTheCli) {
  // Each ill-formed sequence becomes U+FFFD, in ids and texts alike.
  auto r = parse_request("{\"id\":\"a\xff\",\"text\":\"caf\xe9 \xe4\xb8 ok\"}", {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->docs[0].id, "a\xef\xbf\xbd");
  EXPECT_EQ(r->docs[0].text, "caf\xef\xbf\xbd \xef\xbf\xbd ok");
  // Bytes that are not JSON after the repair are still refused.
  auto bad = parse_request("{\"id\":\"a\",\"text\":\xff}", {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::invalid_input);
}

TEST(ServiceRequest, EnforcesLimits) {
  request_limits limits;
  limits.max_documents = 2;
  limits.max_id_bytes = 4;
  auto r = parse_request(R"({"documents":[{"id":"a","text":"x"},{"id":"b","text":"x"},
                                          {"id":"c","text":"x"}]})",
                         limits);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::too_large);
  r = parse_request(R"({"id":"abcde","text":"x"})", limits);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::invalid_input);
  EXPECT_TRUE(parse_request(R"({"id":"abcd","text":"x"})", limits));
}

TEST(ServiceRequest, ExportNamesAreOnePathComponent) {
  auto name = parse_export_name(R"({"name": "news-2026.12_02", "other": 1})");
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, "news-2026.12_02");
  for (const char* bad : {R"({"name": ".."})", R"({"name": "."})", R"({"name": ".hidden"})",
                          R"({"name": "a/b"})", R"({"name": ""})", R"({"name": "a\u0000b"})"}) {
    auto r = parse_export_name(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::invalid_argument) << bad;
  }
  EXPECT_FALSE(parse_export_name(R"({"name": ")" + std::string(65, 'x') + R"("})"));
  for (const char* bad : {"", "{", "[1]", R"({"name": 5})", R"({"nom": "x"})"}) {
    auto r = parse_export_name(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::invalid_input) << bad;
  }
}

}  // namespace
}  // namespace simdup::detail
