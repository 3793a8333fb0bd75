// Inputs that cannot be read to their end (missing, a directory, truncated .gz/.zst) with and
// without reader_options::skip_failed_inputs, and the records read before a truncation.
#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

#include <zlib.h>

#include <algorithm>

namespace simdup {
namespace {

using test::read_all;
using test::temp_dir;

/// Complete lines zlib itself recovers from a cut gzip stream: the reference for what the
/// reader must return before reporting the truncation.
std::size_t recoverable_lines(const std::string& cut) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 22, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(cut.data()));
  z.avail_in = static_cast<uInt>(cut.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  inflate(&z, Z_SYNC_FLUSH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
}

reader_options skipping() {
  reader_options o;
  o.skip_failed_inputs = true;
  return o;
}

TEST(FailedInputs, TruncatedGzipReturnsEveryCompleteRecordBeforeTheError) {
  temp_dir dir;
  const std::string full = test::gzip(test::numbered_jsonl(0, 3000));
  const std::string cut = full.substr(0, full.size() / 2);
  const std::string gz = dir.write("t.jsonl.gz", cut);
  const std::size_t lines = recoverable_lines(cut);
  ASSERT_GT(lines, 0u);
  auto r = reader::open(std::vector<std::string>{gz}, {});
  ASSERT_TRUE(r);
  auto all = read_all(*r);
  EXPECT_EQ(all.docs.size(), lines);
  EXPECT_NE(all.failure.find(gz + ":" + std::to_string(lines + 1) + ": truncated gzip stream"),
            std::string::npos)
      << all.failure;
}

TEST(FailedInputs, SkippedInputsAreBadRecordsAndReadingGoesOn) {
  temp_dir dir;
  const std::string full_gz = test::gzip(test::numbered_jsonl(0, 3000));
  const std::string gz = dir.write("t.jsonl.gz", full_gz.substr(0, full_gz.size() / 2));
  const std::string full_zst = test::zstd(test::numbered_jsonl(0, 3000));
  const std::string zst = dir.write("t.jsonl.zst", full_zst.substr(0, full_zst.size() - 10));
  const std::string ok = dir.write("ok.jsonl", test::numbered_jsonl(0, 2));
  const std::string missing = (dir.path() / "gone.jsonl").string();
  const std::string nomatch = (dir.path() / "none-*.jsonl").string();
  const std::string folder = dir.path().string();
  auto r =
      reader::open(std::vector<std::string>{ok, missing, gz, folder, zst, nomatch, ok}, skipping());
  ASSERT_TRUE(r) << r.error().message;
  document doc;
  error_info err;
  std::vector<std::string> reasons;
  std::size_t records = 0;
  for (;;) {
    const read_status st = r->next(doc, err);
    if (st == read_status::end) break;
    ASSERT_NE(st, read_status::failed) << err.message;
    if (st == read_status::record) {
      ++records;
      continue;
    }
    reasons.emplace_back(r->last_skip_reason());
    EXPECT_FALSE(err.message.empty());
  }
  EXPECT_EQ(reasons, (std::vector<std::string>{"missing_file", "truncated_input", "not_a_file",
                                               "truncated_input", "missing_file"}));
  EXPECT_GT(records, 4u);  // both copies of ok.jsonl and the records before the truncations
  EXPECT_EQ(r->stats().bad_records, 5u);
}

TEST(FailedInputs, WithoutSkipTheyAreFatal) {
  temp_dir dir;
  const std::string ok = dir.write("ok.jsonl", test::numbered_jsonl(0, 2));
  auto missing = reader::open(std::vector<std::string>{ok, (dir.path() / "x.jsonl").string()}, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::not_found);

  auto r = reader::open(std::vector<std::string>{ok, dir.path().string(), ok}, {});
  ASSERT_TRUE(r);
  auto all = read_all(*r);
  EXPECT_EQ(all.docs.size(), 2u);
  EXPECT_NE(all.failure.find("is a directory"), std::string::npos) << all.failure;
}

TEST(FailedInputs, ExpandInputsCanKeepMissingPaths) {
  const std::vector<std::string> in{"/nonexistent/a.jsonl", "/nonexistent/*.jsonl"};
  auto kept = expand_inputs(in, true);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, in);
  EXPECT_FALSE(expand_inputs(in));
}

// Files whose bytes are not text fail like unreadable inputs instead of yielding garbage
// records; text in an 8-bit encoding, WARC payloads and in-memory buffers are still read.
TEST(NotText, NulBytesOrMostlyInvalidUtf8FailTheInput) {
  temp_dir dir;
  std::string png = "\x89PNG\r\n\x1a\n";
  png += std::string("\0\0\0\rIHDR", 8);
  for (int i = 0; i < 5000; ++i) png.push_back(static_cast<char>(i % 256));
  std::string noise;
  for (int i = 0; i < 20000; ++i) noise.push_back(static_cast<char>(0x80 + (i * 37) % 0x7f));
  const std::string ok = dir.write("ok.jsonl", test::numbered_jsonl(0, 2));
  for (const std::string& bytes : {png, noise, test::gzip(png)}) {
    const std::string bad = dir.write("bad.txt", bytes);
    auto r = reader::open(std::vector<std::string>{ok, bad}, {});
    ASSERT_TRUE(r);
    auto all = read_all(*r);
    EXPECT_EQ(all.docs.size(), 2u);
    EXPECT_NE(all.failure.find(bad + ": not text"), std::string::npos) << all.failure;

    auto s = reader::open(std::vector<std::string>{bad, ok}, skipping());
    ASSERT_TRUE(s);
    document doc;
    error_info err;
    ASSERT_EQ(s->next(doc, err), read_status::bad_record);
    EXPECT_EQ(s->last_skip_reason(), "binary_input");
    EXPECT_TRUE(s->last_skip_was_input());
    EXPECT_EQ(s->next(doc, err), read_status::record);
  }
}

TEST(NotText, Latin1WarcAndMemoryBuffersAreRead) {
  temp_dir dir;
  std::string latin1;
  for (int i = 0; i < 100; ++i)
    latin1 +=
        "Caf\xE9 cr\xE8me br\xFBl\xE9"
        "e, na\xEFve fa\xE7"
        "ade.\n";
  const std::string txt = dir.write("latin1.txt", latin1);
  auto r = reader::open(std::vector<std::string>{txt}, {});
  ASSERT_TRUE(r);
  auto all = read_all(*r);
  EXPECT_EQ(all.docs.size(), 100u);
  EXPECT_TRUE(all.failure.empty()) << all.failure;

  // A record that is bad is not an input: last_skip_was_input() tells them apart.
  const std::string jsonl = dir.write("bad.jsonl", "{\"id\": 1, \"text\": \"x\"}\nnot json\n");
  auto j = reader::open(std::vector<std::string>{jsonl}, skipping());
  ASSERT_TRUE(j);
  document doc;
  error_info err;
  ASSERT_EQ(j->next(doc, err), read_status::record);
  ASSERT_EQ(j->next(doc, err), read_status::bad_record);
  EXPECT_EQ(j->last_skip_reason(), "invalid_input");
  EXPECT_FALSE(j->last_skip_was_input());

  // In memory (HTTP bodies, Python): not checked, as before.
  auto m = test::read_string("body", std::string("a\0b\n", 4), input_format::text);
  EXPECT_EQ(m.docs.size(), 1u);
  EXPECT_TRUE(m.failure.empty());
}

}  // namespace
}  // namespace simdup
