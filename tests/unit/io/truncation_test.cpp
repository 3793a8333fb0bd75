// Truncated compressed inputs, cut at every byte: a zstd stream whose every record ends a block
// (and a gzip stream whose every record ends at a full flush) must give back every record of
// the blocks that end before the cut (exactly those when the cut is at a block end; at most
// one more inside a block, whose data a decoder may already hand out), then report the
// truncation: as a fatal error naming the input, or (skip_failed_inputs) as one bad record
// after the same records. The expected counts come from the compressor's output positions.
#include <gtest/gtest.h>

#include <zlib.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "io/io_test_util.hpp"

namespace simdup::test {
namespace {

constexpr int kRecords = 12;

std::string record(int i) {
  return "{\"id\":" + std::to_string(i) + ",\"text\":\"record " + std::to_string(i) +
         " of the truncation test, long enough to compress\"}\n";
}

/// The compressed stream and, for each record, the stream length once its block was flushed
/// (for the last record: before the trailer, the zstd checksum or the gzip CRC and size, which
/// the decoders check after handing out the data).
struct flushed_stream {
  std::string bytes;
  std::vector<std::size_t> ends;
};

flushed_stream zstd_flushed_per_record() {
  flushed_stream s;
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
  std::string buf(ZSTD_CStreamOutSize(), '\0');
  for (int i = 0; i < kRecords; ++i) {
    const std::string r = record(i);
    ZSTD_inBuffer in{r.data(), r.size(), 0};
    // The last record ends the frame (block, then the 4-byte checksum); the others end a block.
    const ZSTD_EndDirective mode = i + 1 == kRecords ? ZSTD_e_end : ZSTD_e_flush;
    std::size_t left;
    do {
      ZSTD_outBuffer out{buf.data(), buf.size(), 0};
      left = ZSTD_compressStream2(ctx, &out, &in, mode);
      EXPECT_FALSE(ZSTD_isError(left));
      s.bytes.append(buf.data(), out.pos);
    } while (left != 0);
    s.ends.push_back(s.bytes.size() - (i + 1 == kRecords ? 4 : 0));
  }
  ZSTD_freeCCtx(ctx);
  return s;
}

flushed_stream gzip_flushed_per_record() {
  flushed_stream s;
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string buf(1 << 16, '\0');
  for (int i = 0; i < kRecords; ++i) {
    std::string r = record(i);
    z.next_in = reinterpret_cast<Bytef*>(r.data());
    z.avail_in = static_cast<uInt>(r.size());
    const int mode = i + 1 == kRecords ? Z_FINISH : Z_FULL_FLUSH;
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    EXPECT_NE(deflate(&z, mode), Z_STREAM_ERROR);
    s.bytes.append(buf.data(), buf.size() - z.avail_out);
    s.ends.push_back(s.bytes.size() - (i + 1 == kRecords ? 8 : 0));
  }
  deflateEnd(&z);
  return s;
}

/// Records whose block ended by `cut`.
int expected_records(const flushed_stream& s, std::size_t cut) {
  int n = 0;
  while (n < kRecords && s.ends[n] <= cut) ++n;
  return n;
}

void check_every_cut(const flushed_stream& s, const char* name) {
  ASSERT_EQ(s.ends.size(), static_cast<std::size_t>(kRecords));
  const auto whole = read_string(name, s.bytes, input_format::jsonl);
  ASSERT_EQ(whole.docs.size(), static_cast<std::size_t>(kRecords));
  ASSERT_TRUE(whole.failure.empty()) << whole.failure;
  int boundaries = 0;
  // From 4 bytes on: shorter, the magic is incomplete and the bytes are read as plain text.
  for (std::size_t cut = 4; cut < s.bytes.size(); ++cut) {
    const std::string cut_bytes = s.bytes.substr(0, cut);
    const auto fatal = read_string(name, cut_bytes, input_format::jsonl);
    ASSERT_FALSE(fatal.failure.empty()) << name << " cut at " << cut << " read to its end";
    ASSERT_NE(fatal.failure.find(name), std::string::npos) << fatal.failure;
    ASSERT_TRUE(fatal.bad.empty()) << name << " cut at " << cut << ": " << fatal.bad.front();
    const int expected = expected_records(s, cut);
    const int got = static_cast<int>(fatal.docs.size());
    bool at_end = false;
    for (std::size_t e : s.ends) at_end |= e == cut;
    boundaries += at_end;
    if (at_end) {
      ASSERT_EQ(got, expected) << name << " cut at block end " << cut;
    } else {
      ASSERT_GE(got, expected) << name << " cut at " << cut;
      ASSERT_LE(got, expected + 1) << name << " cut at " << cut;
    }
    for (int i = 0; i < got; ++i) ASSERT_EQ(fatal.docs[i].id, std::to_string(i));
    reader_options skip;
    skip.skip_failed_inputs = true;
    const auto skipped = read_string(name, cut_bytes, input_format::jsonl, skip);
    ASSERT_TRUE(skipped.failure.empty()) << skipped.failure;
    ASSERT_EQ(static_cast<int>(skipped.docs.size()), got) << name << " cut at " << cut;
    ASSERT_EQ(skipped.bad.size(), 1u) << name << " cut at " << cut;
  }
  EXPECT_EQ(boundaries, kRecords);  // every block end, the last one's before the trailer
}

TEST(Truncation, ZstdCutAtEveryByteRecoversEveryBlockBeforeTheCut) {
  check_every_cut(zstd_flushed_per_record(), "cut.jsonl.zst");
}

TEST(Truncation, GzipCutAtEveryByteRecoversEveryFlushBeforeTheCut) {
  check_every_cut(gzip_flushed_per_record(), "cut.jsonl.gz");
}

}  // namespace
}  // namespace simdup::test
