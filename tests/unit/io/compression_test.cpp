#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

namespace simdup {
namespace {

using test::read_all;
using test::temp_dir;

test::read_all_result read_files(const std::vector<std::string>& paths,
                                 const reader_options& opts = {}) {
  auto r = reader::open(paths, opts);
  EXPECT_TRUE(r) << r.error().message;
  return read_all(*r);
}

TEST(Compression, GzipAndZstdAreDecompressedTransparently) {
  temp_dir dir;
  const std::string gz = dir.write("a.jsonl.gz", test::gzip(test::numbered_jsonl(0, 500)));
  const std::string zst = dir.write("b.jsonl.zst", test::zstd(test::numbered_jsonl(500, 1000)));
  auto r = read_files({gz, zst});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  ASSERT_EQ(r.docs.size(), 1000u);
  EXPECT_EQ(r.docs[499].id, "499");
  EXPECT_EQ(r.docs[499].source, gz);
  EXPECT_EQ(r.docs[500].id, "500");
  EXPECT_EQ(r.docs[500].line, 1u);
  EXPECT_EQ(r.docs[999].text, "document number 999");
}

TEST(Compression, MultiMemberGzipAndMultiFrameZstd) {
  temp_dir dir;
  const std::string gz =
      dir.write("m.jsonl.gz", test::gzip(test::numbered_jsonl(0, 3)) +
                                  test::gzip(test::numbered_jsonl(3, 7)) + test::gzip(""));
  const std::string zst = dir.write("m.jsonl.zst", test::zstd(test::numbered_jsonl(7, 9)) +
                                                       test::zstd(test::numbered_jsonl(9, 10)));
  auto r = read_files({gz, zst});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  ASSERT_EQ(r.docs.size(), 10u);
  EXPECT_EQ(r.docs[6].id, "6");
  EXPECT_EQ(r.docs[6].line, 7u);
  EXPECT_EQ(r.docs[9].id, "9");
}

// A zstd stream may start with a skippable frame (pzstd writes one before every frame, the
// seekable format one at the end): it decodes to nothing, wherever it stands.
TEST(Compression, ZstdSkippableFramesAreSkippedAnywhere) {
  const auto skippable = [](unsigned char magic_low, const std::string& payload) {
    std::string frame{static_cast<char>(magic_low), '\x2a', '\x4d', '\x18'};
    const auto n = static_cast<uint32_t>(payload.size());
    for (int shift = 0; shift < 32; shift += 8) frame += static_cast<char>((n >> shift) & 0xff);
    return frame + payload;
  };
  temp_dir dir;
  const std::string zst = dir.write(
      "s.jsonl.zst", skippable(0x50, std::string(4, '\0')) +
                         test::zstd(test::numbered_jsonl(0, 3)) + skippable(0x5f, "seek table") +
                         test::zstd(test::numbered_jsonl(3, 5)) + skippable(0x5a, ""));
  auto r = read_files({zst});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  ASSERT_EQ(r.docs.size(), 5u);
  EXPECT_EQ(r.docs[4].id, "4");
  // What decides it, for those that must not split a compressed file (simdup.dask).
  EXPECT_TRUE(starts_compressed(std::string_view("\x50\x2a\x4d\x18", 4)));
  EXPECT_TRUE(starts_compressed(test::zstd("x")));
  EXPECT_TRUE(starts_compressed(test::gzip("x")));
  EXPECT_FALSE(starts_compressed("{\"id\": 1}"));
  EXPECT_FALSE(starts_compressed(std::string_view("\x4f\x2a\x4d\x18", 4)));
  // Only a skippable frame, then plain text: not a zstd stream, an error rather than text.
  const std::string bad = dir.write("bad.jsonl", skippable(0x50, "") + test::numbered_jsonl(0, 1));
  EXPECT_FALSE(read_files({bad}).failure.empty());
}

// Readers start with small reads that double up to full-size chunks (kFirstReadChunk): lines
// of every length, one longer than the largest chunk, must come out whole across the growth,
// plain and compressed, from files and from memory.
TEST(Compression, LinesCrossReadChunksWhileTheyGrow) {
  std::vector<std::string> lines;
  std::string text;
  uint32_t x = 12345;
  for (int i = 0; i < 400; ++i) {
    x = x * 1103515245u + 12345u;  // lengths 1 .. 24 KiB, reproducible
    const std::size_t len = i == 200 ? (std::size_t{1} << 19) + 17 : 1 + (x >> 8) % 24576;
    lines.emplace_back(len, static_cast<char>('a' + i % 26));
    text += lines.back() + (i % 3 == 0 ? "\r\n" : "\n");
  }
  temp_dir dir;
  const std::vector<std::string> files = {dir.write("plain.txt", text),
                                          dir.write("packed.txt.gz", test::gzip(text)),
                                          dir.write("packed.txt.zst", test::zstd(text))};
  std::vector<test::read_all_result> reads;
  for (const std::string& f : files) reads.push_back(read_files({f}));
  reads.push_back(test::read_string("memory.txt", text, input_format::text));
  for (const auto& r : reads) {
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    ASSERT_EQ(r.docs.size(), lines.size());
    std::size_t offset = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      ASSERT_EQ(r.docs[i].text, lines[i]) << "line " << i + 1;
      ASSERT_EQ(r.docs[i].offset, offset) << "line " << i + 1;
      offset += lines[i].size() + (i % 3 == 0 ? 2 : 1);
    }
  }
}

TEST(Compression, DetectedByMagicBytesNotOnlyExtension) {
  temp_dir dir;
  const std::string a = dir.write("plain.jsonl", test::gzip(test::numbered_jsonl(0, 2)));
  const std::string b = dir.write("noext", test::zstd(test::numbered_jsonl(2, 4)));
  auto r = read_files({a, b});
  ASSERT_EQ(r.docs.size(), 4u);
  EXPECT_EQ(r.docs[3].text, "document number 3");
  EXPECT_EQ(r.docs[3].format, input_format::jsonl);  // sniffed after decompression
}

TEST(Compression, TruncatedStreamsAreFatalErrorsNamingTheFile) {
  temp_dir dir;
  const std::string full_gz = test::gzip(test::numbered_jsonl(0, 2000));
  const std::string gz = dir.write("t.jsonl.gz", full_gz.substr(0, full_gz.size() / 2));
  auto r = read_files({gz});
  EXPECT_LT(r.docs.size(), 2000u);
  EXPECT_NE(r.failure.find("truncated gzip stream in " + gz), std::string::npos) << r.failure;

  const std::string full_zst = test::zstd(test::numbered_jsonl(0, 2000));
  const std::string zst = dir.write("t.jsonl.zst", full_zst.substr(0, full_zst.size() - 10));
  auto z = read_files({zst});
  EXPECT_NE(z.failure.find("truncated zstd stream in " + zst), std::string::npos) << z.failure;

  // Only the gzip trailer is missing: every record decodes but the stream is still incomplete.
  const std::string tail = dir.write("tail.jsonl.gz", full_gz.substr(0, full_gz.size() - 4));
  auto t = read_files({tail});
  EXPECT_NE(t.failure.find("truncated gzip stream"), std::string::npos) << t.failure;
}

TEST(Compression, CorruptGzipIsAnError) {
  temp_dir dir;
  std::string bytes = test::gzip(test::numbered_jsonl(0, 50));
  for (std::size_t i = 12; i < bytes.size() - 8; i += 7) bytes[i] = static_cast<char>(~bytes[i]);
  const std::string p = dir.write("c.jsonl.gz", bytes);
  auto r = read_files({p});
  EXPECT_NE(r.failure.find(p), std::string::npos) << r.failure;
}

// A corrupt member or frame after sound ones: every record of the sound ones is read before the
// error (the decoder's error came in the same read as up to 256 KiB of sound bytes, and those
// were lost), from files and from memory, failing or skipping the input.
TEST(Compression, RecordsBeforeACorruptMemberOrFrameAreRead) {
  temp_dir dir;
  const std::string sound = test::numbered_jsonl(0, 5000);  // about 150 KB
  std::string bad_gz = test::gzip(std::string(1000, 'x'));
  bad_gz[20] = static_cast<char>(~bad_gz[20]);
  std::string bad_zst = test::zstd(test::numbered_jsonl(0, 100));
  bad_zst[bad_zst.size() / 2] = static_cast<char>(~bad_zst[bad_zst.size() / 2]);
  for (const auto& [name, bytes] :
       {std::pair{std::string("c.jsonl.gz"), test::gzip(sound) + bad_gz},
        std::pair{std::string("c.jsonl.zst"), test::zstd(sound) + bad_zst}}) {
    const std::string path = dir.write(name, bytes);
    auto r = read_files({path});
    EXPECT_EQ(r.docs.size(), 5000u) << name;
    EXPECT_NE(r.failure.find("corrupt"), std::string::npos) << r.failure;
    EXPECT_NE(r.failure.find("the 5000 lines before it were read"), std::string::npos) << r.failure;
    reader_options skip;
    skip.skip_failed_inputs = true;
    auto read = test::read_string(name, bytes, input_format::auto_detect, skip);
    EXPECT_EQ(read.docs.size(), 5000u) << name;
    ASSERT_EQ(read.bad.size(), 1u) << name;
    EXPECT_NE(read.bad[0].find("corrupt"), std::string::npos) << read.bad[0];
  }
}

// Zero bytes after the last gzip member are padding (tape blocks), as gzip and Python read them;
// anything after the padding is corrupt data.
TEST(Compression, GzipZeroPaddingAtTheEndIsSkipped) {
  temp_dir dir;
  const std::string gz = test::gzip(test::numbered_jsonl(0, 3));
  const std::string padded = dir.write("p.jsonl.gz", gz + std::string(70000, '\0'));
  auto r = read_files({padded});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  EXPECT_EQ(r.docs.size(), 3u);
  const std::string after = dir.write("a.jsonl.gz", gz + std::string(10, '\0') + gz);
  auto a = read_files({after});
  EXPECT_EQ(a.docs.size(), 3u);
  EXPECT_NE(a.failure.find("corrupt gzip data in " + after + ": data after the zero bytes"),
            std::string::npos)
      << a.failure;
}

TEST(Inputs, GlobsExpandSortedAndMissingInputsAreErrors) {
  temp_dir dir;
  dir.write("p2.jsonl", test::numbered_jsonl(2, 3));
  dir.write("p1.jsonl", test::numbered_jsonl(1, 2));
  dir.write("q.txt", "not matched\n");
  const std::string pattern = (dir.path() / "p*.jsonl").string();
  auto r = read_files({pattern});
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, "1");
  EXPECT_EQ(r.docs[1].id, "2");

  auto none = reader::open(std::vector<std::string>{(dir.path() / "z*.jsonl").string()}, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, errc::not_found);
  EXPECT_NE(none.error().message.find("z*.jsonl"), std::string::npos);

  auto missing = reader::open(std::vector<std::string>{(dir.path() / "gone.jsonl").string()}, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("gone.jsonl"), std::string::npos);

  auto empty = expand_inputs({});
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, std::vector<std::string>{"-"});
}

TEST(Inputs, FormatOverrideAppliesToEveryInput) {
  temp_dir dir;
  const std::string p = dir.write("data.jsonl", "k\tv\n");
  reader_options opts;
  opts.format = input_format::tsv;
  auto r = read_files({p}, opts);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].id, "k");
  EXPECT_EQ(r.docs[0].text, "v");
}

TEST(Inputs, StatsCountRecordsAndBytes) {
  temp_dir dir;
  const std::string plain = test::numbered_jsonl(0, 10) + "not json\n";
  const std::string p = dir.write("s.jsonl.gz", test::gzip(plain));
  auto r = reader::open(std::vector<std::string>{p}, {});
  ASSERT_TRUE(r);
  auto all = read_all(*r);
  EXPECT_EQ(r->stats().records, 10u);
  EXPECT_EQ(r->stats().bad_records, 1u);
  EXPECT_EQ(r->stats().bytes, plain.size());
  EXPECT_EQ(r->stats().compressed_bytes, test::gzip(plain).size());
  EXPECT_EQ(r->stats().inputs_opened, 1u);
}

}  // namespace
}  // namespace simdup
