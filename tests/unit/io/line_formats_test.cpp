#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

namespace simdup {
namespace {

using test::read_string;

TEST(TextReader, EveryLineIsADocumentIdIsTheLineNumber) {
  auto r = read_string("a.txt", "first\r\n\nthird\nlast");
  ASSERT_EQ(r.docs.size(), 4u);
  EXPECT_EQ(r.docs[0].id, "1");
  EXPECT_TRUE(r.docs[0].id_is_number);
  EXPECT_EQ(r.docs[0].text, "first");
  EXPECT_EQ(r.docs[1].text, "");  // empty lines are (empty) documents
  EXPECT_EQ(r.docs[2].id, "3");
  EXPECT_EQ(r.docs[3].text, "last");
  EXPECT_EQ(r.docs[3].offset, 14u);
}

TEST(TextReader, TrailingNewlineDoesNotAddADocument) {
  auto r = read_string("b.txt", "one\ntwo\n");
  EXPECT_EQ(r.docs.size(), 2u);
}

TEST(TsvReader, SplitsAtTheFirstTabAndDecodesEscapes) {
  auto r = read_string("a.tsv", "d1\tline\\none\\ttab\\\\slash\\x\nd2\ta\tb\n\n\tno id\nno tab\n");
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "d1");
  EXPECT_FALSE(r.docs[0].id_is_number);
  EXPECT_EQ(r.docs[0].text, "line\none\ttab\\slash\\x");
  EXPECT_EQ(r.docs[0].raw, "d1\tline\\none\\ttab\\\\slash\\x");
  EXPECT_EQ(r.docs[1].text, "a\tb");
  EXPECT_EQ(r.docs[2].id, "a.tsv:4");
  EXPECT_TRUE(r.docs[2].id_generated);
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_NE(r.bad[0].find("a.tsv:5: expected id<TAB>text"), std::string::npos) << r.bad[0];
}

TEST(CsvReader, HeaderNamesColumnsAndQuotingFollowsRfc4180) {
  const std::string data =
      "title,id,text,time\r\n"
      "T1,1,plain,1700000000\r\n"
      "\"T,2\",2,\"say \"\"hi\"\"\r\nnext line\",2024-01-01\r\n"
      "\r\n"
      "T3,3,,\r\n";
  auto r = read_string("a.csv", data);
  ASSERT_TRUE(r.bad.empty()) << r.bad[0];
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "1");
  EXPECT_EQ(r.docs[0].title, "T1");
  EXPECT_EQ(r.docs[0].time, 1700000000);
  EXPECT_EQ(r.docs[1].title, "T,2");
  EXPECT_EQ(r.docs[1].text, "say \"hi\"\r\nnext line");
  EXPECT_EQ(r.docs[1].time, 1704067200);
  EXPECT_EQ(r.docs[1].line, 3u);
  EXPECT_EQ(r.docs[1].raw, "\"T,2\",2,\"say \"\"hi\"\"\r\nnext line\",2024-01-01");
  EXPECT_EQ(r.docs[2].id, "3");
  EXPECT_EQ(r.docs[2].text, "");
  EXPECT_FALSE(r.docs[2].time.has_value());
  EXPECT_EQ(r.docs[2].line, 6u);
}

TEST(CsvReader, ReportsBadRecordsAndContinues) {
  auto r = read_string("b.csv", "id,text\n1,a\n2,b,extra\n3,\"x\"y\n4,d\n5,\"never closed\n");
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[1].id, "4");
  ASSERT_EQ(r.bad.size(), 3u);
  EXPECT_NE(r.bad[0].find("b.csv:3: expected 2 fields, found 3"), std::string::npos) << r.bad[0];
  EXPECT_NE(r.bad[1].find("b.csv:4:"), std::string::npos) << r.bad[1];
  EXPECT_NE(r.bad[2].find("unterminated quoted field"), std::string::npos) << r.bad[2];
}

// A record over the limit is one bad record, read to its end: the lines of its quoted field
// are not records (they were: 34,426 bogus records from one 2.5 MB field), also where one of
// its lines is itself over the limit and holds quotes (counted while it is skipped).
TEST(CsvReader, RecordOverTheLimitIsOneBadRecordReadToItsEnd) {
  reader_options limit;
  limit.max_record_bytes = 100;
  std::string field;
  for (int i = 0; i < 40; ++i) field += "line, with \"\"quotes\"\"\n";
  const std::string long_line = std::string(150, 'x') + "\"\"" + std::string(150, 'y');
  const std::string data = "id,text\n1,first\n2,\"" + field + "\"\n3,\"a\n" + long_line +
                           "\nb\"\n4,\"" + long_line + "\"\n5,last\n";
  auto r = read_string("big.csv", data, input_format::csv, limit);
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, "1");
  EXPECT_EQ(r.docs[1].id, "5");
  EXPECT_EQ(r.docs[1].line, 2u + 41u + 3u + 1u + 1u);
  ASSERT_EQ(r.bad.size(), 3u);
  for (const std::string& bad : r.bad)
    EXPECT_NE(bad.find("record larger than 100 bytes"), std::string::npos) << bad;
  EXPECT_NE(r.bad[0].find("big.csv:3:"), std::string::npos) << r.bad[0];
  EXPECT_NE(r.bad[1].find("big.csv:44:"), std::string::npos) << r.bad[1];
  EXPECT_NE(r.bad[2].find("big.csv:47:"), std::string::npos) << r.bad[2];
}

TEST(CsvReader, HeaderWithoutTextColumnIsFatal) {
  auto r = read_string("c.csv", "id,body\n1,a\n");
  EXPECT_TRUE(r.docs.empty());
  EXPECT_NE(r.failure.find("c.csv: the CSV header has no column 'text'"), std::string::npos)
      << r.failure;
}

TEST(CsvReader, ExposesItsHeaderForWriters) {
  reader r = reader::from_memory("h.csv", "id,text\n1,a\n", {});
  document doc;
  error_info err;
  ASSERT_EQ(r.next(doc, err), read_status::record);
  EXPECT_EQ(r.header(), "id,text");
}

TEST(FormatDetection, ExtensionsAndSniffing) {
  EXPECT_EQ(format_from_extension("x/a.jsonl.gz"), input_format::jsonl);
  EXPECT_EQ(format_from_extension("a.ndjson"), input_format::jsonl);
  EXPECT_EQ(format_from_extension("a.json.zst"), input_format::jsonl);
  EXPECT_EQ(format_from_extension("a.tsv"), input_format::tsv);
  EXPECT_EQ(format_from_extension("a.csv.gz"), input_format::csv);
  EXPECT_EQ(format_from_extension("a.txt"), input_format::text);
  EXPECT_EQ(format_from_extension("CC-MAIN-1.warc.gz"), input_format::warc);
  EXPECT_EQ(format_from_extension("CC-MAIN-1.warc.wet.gz"), input_format::warc);
  EXPECT_EQ(format_from_extension("dir.v2/data"), input_format::auto_detect);
  EXPECT_EQ(format_from_extension("data.gz"), input_format::auto_detect);

  EXPECT_EQ(read_string("-", "  {\"id\":1,\"text\":\"a\"}\n").docs.at(0).format,
            input_format::jsonl);
  EXPECT_EQ(read_string("-", "just words\n").docs.at(0).format, input_format::text);
  EXPECT_EQ(read_string("a.txt", "{\"id\":1}\n", input_format::text).docs.at(0).text, "{\"id\":1}");
}

TEST(FormatDetection, ParseFormatNames) {
  EXPECT_EQ(*parse_input_format("wet"), input_format::warc);
  EXPECT_EQ(*parse_input_format("ndjson"), input_format::jsonl);
  auto bad = parse_input_format("xml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("'xml'"), std::string::npos);
}

TEST(Iso8601, AcceptedForms) {
  EXPECT_EQ(*parse_iso8601("1970-01-01"), 0);
  EXPECT_EQ(*parse_iso8601("2000-03-01T00:00:00Z"), 951868800);
  EXPECT_EQ(*parse_iso8601("2000-03-01 01:00:00.123+01:00"), 951868800);
  EXPECT_EQ(*parse_iso8601("2000-02-29T23:00-0100"), 951868800);
  EXPECT_EQ(*parse_iso8601("1969-12-31T23:59:59Z"), -1);
  EXPECT_FALSE(parse_iso8601("2001-02-29"));
  EXPECT_FALSE(parse_iso8601("2001-13-01"));
  EXPECT_FALSE(parse_iso8601("2001-01-01T25:00:00"));
  EXPECT_FALSE(parse_iso8601("2001-01-01T10:00:00 junk"));
  EXPECT_FALSE(parse_iso8601("1700000000"));
}

}  // namespace
}  // namespace simdup
