#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

namespace simdup {
namespace {

using test::read_string;

TEST(JsonlReader, ReadsFieldsAndKeepsRawLine) {
  const std::string line =
      R"({"id":"a\"1","text":"Hello\nworld","url":"http://x/","title":"T","extra":[1,{"y":2}]})";
  auto r = read_string("in.jsonl", line + "\n");
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 1u);
  const document& d = r.docs[0];
  EXPECT_EQ(d.id, "a\"1");
  EXPECT_FALSE(d.id_is_number);
  EXPECT_EQ(d.text, "Hello\nworld");
  EXPECT_EQ(d.url, "http://x/");
  EXPECT_EQ(d.title, "T");
  EXPECT_EQ(d.raw, line);
  EXPECT_EQ(d.format, input_format::jsonl);
  EXPECT_EQ(d.source, "in.jsonl");
  EXPECT_EQ(d.line, 1u);
  EXPECT_EQ(d.offset, 0u);
  EXPECT_FALSE(d.features.has_value());
}

TEST(JsonlReader, NumberIdsKeepTheirLiteralText) {
  auto r = read_string("n.jsonl",
                       "{\"id\": 1.50 , \"text\": \"a\"}\n{\"id\":-7,\"text\":\"b\"}\n"
                       "{\"id\":123456789012345678901234567890,\"text\":\"c\"}\n");
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "1.50");
  EXPECT_TRUE(r.docs[0].id_is_number);
  EXPECT_EQ(r.docs[1].id, "-7");
  EXPECT_EQ(r.docs[2].id, "123456789012345678901234567890");
}

TEST(JsonlReader, MissingIdIsGeneratedFromSourceAndLine) {
  auto r = read_string("g.jsonl", "\n{\"text\":\"a\"}\n{\"id\":null,\"text\":\"b\"}\n");
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, "g.jsonl:2");
  EXPECT_TRUE(r.docs[0].id_generated);
  EXPECT_EQ(r.docs[1].id, "g.jsonl:3");
  EXPECT_EQ(r.docs[1].offset, 14u);
}

TEST(JsonlReader, MalformedLinesAreReportedAndReadingContinues) {
  auto r = read_string("bad.jsonl",
                       "{\"id\":1,\"text\":\"ok\"}\n{\"id\":2,\"text\":\"broken\n"
                       "{\"id\":3}\n[1,2]\n{\"id\":4,\"text\":5}\n{\"id\":5,\"text\":\"x\"} 7\n"
                       "{\"id\":6,\"text\":\"last\"}\n");
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, "1");
  EXPECT_EQ(r.docs[1].id, "6");
  EXPECT_EQ(r.docs[1].line, 7u);
  ASSERT_EQ(r.bad.size(), 5u);
  EXPECT_NE(r.bad[0].find("bad.jsonl:2: invalid JSON"), std::string::npos) << r.bad[0];
  EXPECT_NE(r.bad[1].find("bad.jsonl:3: missing text field 'text'"), std::string::npos) << r.bad[1];
  EXPECT_NE(r.bad[2].find("bad.jsonl:4:"), std::string::npos) << r.bad[2];
  EXPECT_NE(r.bad[3].find("bad.jsonl:5: field 'text' must be a string"), std::string::npos)
      << r.bad[3];
  EXPECT_NE(r.bad[4].find("bad.jsonl:6:"), std::string::npos) << r.bad[4];
}

TEST(JsonlReader, BlankLinesCrlfAndBomAreHandled) {
  auto r = read_string(
      "c.jsonl", "\xEF\xBB\xBF{\"id\":1,\"text\":\"a\"}\r\n  \r\n\r\n{\"id\":2,\"text\":\"b\"}");
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].raw, "{\"id\":1,\"text\":\"a\"}");
  EXPECT_EQ(r.docs[1].line, 4u);
  EXPECT_EQ(r.docs[1].text, "b");
}

TEST(JsonlReader, InvalidUtf8IsRepairedAndCounted) {
  const std::string line =
      "{\"id\":1,\"text\":\"a\xFF"
      "b\xE4\xB8\"}";
  auto r = read_string("u.jsonl", line + "\n");
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].text,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(r.docs[0].invalid_utf8, 2u);
  EXPECT_EQ(r.docs[0].raw, line);  // raw bytes stay exactly as read
}

TEST(JsonlReader, SuppliedFeaturesInBothForms) {
  auto r = read_string("f.jsonl",
                       "{\"id\":1,\"features\":[\"a\",\"b\"]}\n"
                       "{\"id\":2,\"features\":[[\"x\",2.5],[\"y\",1],\"z\"]}\n"
                       "{\"id\":3,\"features\":[[\"x\"]]}\n{\"id\":4,\"features\":{\"x\":1}}\n");
  ASSERT_EQ(r.docs.size(), 2u);
  ASSERT_TRUE(r.docs[0].features.has_value());
  ASSERT_EQ(r.docs[0].features->size(), 2u);
  EXPECT_EQ((*r.docs[0].features)[1].text, "b");
  EXPECT_EQ((*r.docs[0].features)[1].weight, 1.0);
  const auto& f = *r.docs[1].features;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].text, "x");
  EXPECT_EQ(f[0].weight, 2.5);
  EXPECT_EQ(f[2].text, "z");
  EXPECT_EQ(r.bad.size(), 2u);
}

TEST(JsonlReader, TimeAcceptsIntegersAndIso8601) {
  auto r = read_string("t.jsonl",
                       "{\"text\":\"a\",\"time\":1700000000}\n"
                       "{\"text\":\"b\",\"time\":\"2024-02-29T12:30:00+02:00\"}\n"
                       "{\"text\":\"c\",\"time\":\"yesterday\"}\n{\"text\":\"d\",\"time\":12.9}\n");
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].time, 1700000000);
  EXPECT_EQ(r.docs[1].time, 1709202600);
  EXPECT_EQ(r.docs[2].time, 12);
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("t.jsonl:3: field 'time'"), std::string::npos) << r.bad[0];
}

TEST(JsonlReader, FieldNamesAreConfigurable) {
  reader_options opts;
  opts.fields.id = "doc_id";
  opts.fields.text = "body";
  auto r = read_string("k.jsonl", "{\"doc_id\":\"d1\",\"body\":\"hi\",\"text\":\"ignored\"}\n",
                       input_format::auto_detect, opts);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, "d1");
  EXPECT_EQ(r.docs[0].text, "hi");
}

TEST(JsonlReader, EmptyTextIsAValidRecord) {
  auto r = read_string("e.jsonl", "{\"id\":1,\"text\":\"\"}\n");
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_TRUE(r.docs[0].text.empty());
}

TEST(JsonlReader, OversizedRecordsAreBadRecords) {
  reader_options opts;
  opts.max_record_bytes = 1000;
  const std::string big = "{\"id\":1,\"text\":\"" + std::string(5000, 'x') + "\"}\n";
  auto r = read_string("big.jsonl", big + "{\"id\":2,\"text\":\"small\"}\n",
                       input_format::auto_detect, opts);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, "2");
  EXPECT_EQ(r.docs[0].line, 2u);
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("big.jsonl:1: record larger than 1000 bytes"), std::string::npos)
      << r.bad[0];
}

TEST(JsonlReader, LongLineAcrossManyBufferFills) {
  const std::string text(3'000'000, 'w');
  auto r =
      read_string("long.jsonl", "{\"id\":1,\"text\":\"" + text + "\"}\n{\"id\":2,\"text\":\"z\"}");
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].text.size(), text.size());
  EXPECT_EQ(r.docs[1].offset, text.size() + 19);
}

}  // namespace
}  // namespace simdup
