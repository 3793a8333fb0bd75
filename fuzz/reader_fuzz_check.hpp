// What the record-reader harnesses (fuzz/*_reader_fuzz.cpp) check on every input, shared with
// the replay test (tests/unit/io/reader_fuzz_test.cpp) that runs without clang.
//
// check_reader(): one format (JSONL, TSV, CSV, text, WARC, auto) over a plain input, and the
// same bytes gzip- and zstd-compressed. The reader must terminate, keep its contract (records
// have ids, `raw` is exactly the bytes at `offset`, offsets increase, statistics agree, `end`
// and `failed` are sticky) and read the compressed copies exactly as the plain one.
//
// check_compressed(): arbitrary bytes read as a .gz/.zst stream. An independent one-shot
// decompression (zlib/zstd directly) is the oracle: where it succeeds the reader must return
// exactly the records of the decompressed bytes; where it fails the reader must fail too
// (never a clean end), and with skip_failed_inputs report one bad record instead, after the
// same records.
//
// Both return "" when everything holds, else what broke.
#pragma once

#include <simdup/reader.hpp>
#include <simdup/utf8.hpp>

#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::fuzz {

/// Records longer than this are bad records, so that fuzzed inputs reach the limit.
inline constexpr std::size_t reader_fuzz_max_record = 2048;
/// Decompressed inputs larger than this are not read: a few fuzzed bytes can expand to gigabytes,
/// which is the input's size, not a reader bug, and would only slow the fuzzer. 512 KiB is past
/// the line input's full-size chunk (256 KiB), so its growth and refills are still reached.
inline constexpr std::size_t reader_fuzz_max_plain = std::size_t{512} << 10;

/// A digest of every field of a record, to compare two reads of it: the harness keeps one per
/// record instead of the record (a fuzzed input can give 500,000 of them, and copying them
/// was half of a run's time).
inline uint64_t record_digest(const document& d) {
  uint64_t h = 0;
  const auto value = [&](uint64_t v) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  };
  const auto text = [&](std::string_view v) {
    value(v.size());
    value(XXH3_64bits(v.data(), v.size()));
  };
  text(d.id);
  value(d.id_is_number);
  value(d.id_generated);
  text(d.text);
  value(d.text_is_html);
  text(d.url);
  text(d.title);
  value(d.time.has_value());
  value(static_cast<uint64_t>(d.time.value_or(0)));
  value(d.invalid_utf8);
  text(d.raw);
  value(static_cast<uint64_t>(d.format));
  value(d.line);
  value(d.offset);
  value(d.features.has_value());
  if (d.features) {
    for (const weighted_feature& f : *d.features) {
      text(f.text);
      value(std::bit_cast<uint64_t>(f.weight));
    }
  }
  return h;
}

/// What one next() call gave.
struct read_item {
  read_status status;
  uint64_t offset = 0;      ///< record and bad_record: where it starts
  input_format format{};    ///< record
  uint64_t digest = 0;      ///< record: record_digest
  std::string skip_reason;  ///< bad_record
  errc code{};              ///< bad_record and failed
  uint64_t bytes_read = 0;  ///< end and failed: the reader's stats().bytes
};

inline bool same_items(const std::vector<read_item>& a, const std::vector<read_item>& b,
                       std::size_t n) {
  if (a.size() < n || b.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].status != b[i].status) return false;
    if (a[i].status == read_status::record && a[i].digest != b[i].digest) return false;
    if (a[i].status == read_status::bad_record &&
        (a[i].skip_reason != b[i].skip_reason || a[i].code != b[i].code ||
         a[i].offset != b[i].offset)) {
      return false;
    }
  }
  return true;
}

/// The record lists of a check, kept between calls: growing fresh ones from empty took a fifth
/// of a compressed_reader run (their reallocations and the page faults of new memory).
inline std::vector<read_item>& kept_items(int slot) {
  static thread_local std::vector<read_item> lists[3];
  return lists[slot];
}

/// Reads `data` (named "fuzz") to its end. `plain`: the decompressed bytes when known, for the
/// checks that compare records with them. `decompressed_bound`: at least the bytes the reader
/// can decompress when `plain` is unknown (a corrupt stream can still expand before it fails).
/// Fills `items` (the last one is `end` or `failed`).
inline std::string read_all(std::string data, const std::optional<std::string_view>& plain,
                            const reader_options& options, std::vector<read_item>& items,
                            std::size_t decompressed_bound = 0) {
  items.clear();
  const std::size_t budget =
      (plain ? plain->size() : std::max(data.size(), decompressed_bound)) + 3;
  reader r = reader::from_memory("fuzz", std::move(data), options);
  uint64_t records = 0, bad = 0;
  std::optional<uint64_t> last_offset;
  for (std::size_t calls = 0;; ++calls) {
    // Every record or bad record consumes at least one byte (a line terminator or more).
    if (calls > budget) return "no end after " + std::to_string(calls) + " calls";
    document doc;  // fresh, as a caller's would be: a bad record may leave fields unset
    read_item it;
    error_info error{};
    it.status = r.next(doc, error);
    it.code = error.code;
    it.offset = doc.offset;
    it.format = doc.format;
    switch (it.status) {
      case read_status::record:
        ++records;
        it.digest = record_digest(doc);
        if (doc.id.empty()) return "record without id";
        if (doc.format == input_format::auto_detect) return "record format auto_detect";
        if (options.format != input_format::auto_detect && doc.format != options.format)
          return "record of another format";
        if (doc.source != "fuzz") return "record source is not the input's name";
        if (doc.format == input_format::jsonl) {
          if (!utf8::is_valid(doc.text)) return "JSONL text is not valid UTF-8";
          if (!utf8::is_valid(doc.id)) return "JSONL id is not valid UTF-8";
        }
        break;
      case read_status::bad_record:
        ++bad;
        if (error.message.empty()) return "bad_record without message";
        it.skip_reason = std::string(r.last_skip_reason());
        if (it.skip_reason.empty()) return "bad_record without skip reason";
        break;
      case read_status::failed:
        if (error.message.empty()) return "failed without message";
        break;
      case read_status::end:
        break;
    }
    if (it.status == read_status::record ||
        (it.status == read_status::bad_record && !doc.raw.empty())) {
      if (last_offset && doc.offset <= *last_offset) return "record offsets do not increase";
      last_offset = doc.offset;
      if (plain &&
          (doc.offset > plain->size() || plain->substr(doc.offset, doc.raw.size()) != doc.raw)) {
        return "raw is not the input's bytes at offset " + std::to_string(doc.offset);
      }
    }
    const bool last = it.status == read_status::end || it.status == read_status::failed;
    if (last) it.bytes_read = r.stats().bytes;
    items.push_back(std::move(it));
    if (!last) continue;
    document again;
    error_info again_error{};
    if (r.next(again, again_error) != items.back().status) return "end or failed is not sticky";
    if (r.stats().records != records || r.stats().bad_records != bad)
      return "stats disagree with the results";
    if (items.back().status == read_status::end && plain && r.stats().bytes != plain->size())
      return "stats.bytes " + std::to_string(r.stats().bytes) + " at end, input has " +
             std::to_string(plain->size());
    return "";
  }
}

/// gzip, a zstd frame, or a zstd skippable frame: what the readers decompress.
inline bool has_compression_magic(std::string_view s) {
  return starts_compressed(s);
}

/// The oracle's zstd decoder, reset for each stream: a fresh one allocates its window anew, and
/// under ASan each new block costs page faults.
inline ZSTD_DCtx* oracle_dctx() {
  static ZSTD_DCtx* const ctx = ZSTD_createDCtx();
  ZSTD_DCtx_reset(ctx, ZSTD_reset_session_and_parameters);
  return ctx;
}

// The compressors keep their state between calls (deflateReset, a reused ZSTD_CCtx: the same
// output as fresh ones): a fresh deflate state allocates and clears about 256 KiB, a
// fuzz run's largest cost.
inline std::string gzip_bytes(std::string_view data) {
  static z_stream z{};  // in place: zlib's state points back at it
  static const bool ready = deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  if (!ready || deflateReset(&z) != Z_OK) return {};
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  return rc == Z_STREAM_END ? out : std::string();
}

inline std::string zstd_bytes(std::string_view data) {
  static ZSTD_CCtx* const ctx = ZSTD_createCCtx();
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compressCCtx(ctx, out.data(), out.size(), data.data(), data.size(), 1);
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

/// The oracle's verdict on a compressed stream.
enum class decompressed { ok, corrupt, too_large };

/// Where the first frame of a legacy zstd format (v0.x) starts in `data`, which the readers
/// refuse though libzstd decodes it; data.size() when there is none. The frames are walked
/// with ZSTD_findFrameCompressedSize; one it cannot size ends the walk (the decoder fails there).
inline std::size_t zstd_legacy_start(std::string_view data) {
  std::size_t at = 0;
  while (data.size() - at >= 4) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(data[at + i]); };
    const bool zstd_magic_tail = byte(1) == 0xb5 && byte(2) == 0x2f && byte(3) == 0xfd;
    if (!(zstd_magic_tail && byte(0) == 0x28) &&
        !((byte(0) & 0xf0) == 0x50 && byte(1) == 0x2a && byte(2) == 0x4d && byte(3) == 0x18)) {
      return zstd_magic_tail && byte(0) >= 0x1e && byte(0) <= 0x27 ? at : data.size();
    }
    const std::size_t n = ZSTD_findFrameCompressedSize(data.data() + at, data.size() - at);
    if (ZSTD_isError(n)) return data.size();
    at += n;
  }
  return data.size();
}

/// Each zstd frame's decoded size against the size its header declares, which libzstd checks
/// only where it decodes a frame in one pass (an output buffer that holds the declared size), not
/// while streaming (found by the campaign twice: a frame declaring 24,064 bytes and holding none,
/// the 64 KiB oracle buffer's one-pass case; one declaring 1,568,734,511 and holding 1,312).
class zstd_frame_sizes {
 public:
  explicit zstd_frame_sizes(std::string_view data) : data_(data) {}
  /// After a ZSTD_decompressStream call that did not fail: it wrote `n` bytes, returned `rc` (0:
  /// a frame ended) and left the input at `pos`. False when the frame ended at another size than
  /// its header declares.
  bool sound(std::size_t n, std::size_t rc, std::size_t pos) {
    decoded_ += n;
    if (rc != 0) return true;
    const unsigned long long declared =
        ZSTD_getFrameContentSize(data_.data() + start_, data_.size() - start_);
    const bool same = declared == ZSTD_CONTENTSIZE_UNKNOWN || declared == decoded_;
    start_ = pos;
    decoded_ = 0;
    return same;
  }

 private:
  std::string_view data_;
  std::size_t start_ = 0;  ///< where the current frame starts
  uint64_t decoded_ = 0;   ///< its bytes decoded so far
};

/// One-shot decompression of every gzip member / zstd frame in `data` (which starts with the
/// gzip or zstd magic), independent of the reader's streaming code.
inline decompressed decompress_all(std::string_view data, std::string& out) {
  out.clear();
  const bool gz = data[0] == '\x1f';
  static std::string chunk(1 << 16, '\0');  // not cleared per input: written before read
  if (gz) {
    // Zero bytes to the end after a member are padding, as gzip(1) reads them (the reader too).
    while (!data.empty() && data.find_first_not_of('\0') != std::string_view::npos) {
      z_stream z{};
      if (inflateInit2(&z, 15 + 16) != Z_OK) return decompressed::corrupt;
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z.avail_in = static_cast<uInt>(data.size());
      int rc = Z_OK;
      while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(chunk.data());
        z.avail_out = static_cast<uInt>(chunk.size());
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(chunk.data(), chunk.size() - z.avail_out);
        if (out.size() > reader_fuzz_max_plain) {
          inflateEnd(&z);
          return decompressed::too_large;
        }
        if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input exhausted mid-member
        if (rc == Z_BUF_ERROR) rc = Z_OK;
      }
      const std::size_t used = data.size() - z.avail_in;
      inflateEnd(&z);
      if (rc != Z_STREAM_END) return decompressed::corrupt;
      data.remove_prefix(used);
    }
    return decompressed::ok;
  }
  if (const std::size_t legacy = zstd_legacy_start(data); legacy < data.size()) {
    if (legacy == 0) return decompressed::corrupt;
    const decompressed before = decompress_all(data.substr(0, legacy), out);
    return before == decompressed::too_large ? before : decompressed::corrupt;
  }
  ZSTD_DCtx* const ctx = oracle_dctx();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  zstd_frame_sizes frames(data);
  std::size_t rc = 0;
  // Until the input is used up, then on to flush what the last frame still holds.
  for (bool flushing = false; !flushing || rc != 0; flushing = in.pos == in.size) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    rc = ZSTD_decompressStream(ctx, &o, &in);
    // A failing call's output position is not to be trusted (libzstd 1.5.4 counted 4,096 bytes
    // it never wrote, and this chunk's stale bytes were taken for output). Flushing, no output
    // is a truncated frame.
    if (ZSTD_isError(rc) || (flushing && o.pos == 0)) return decompressed::corrupt;
    out.append(chunk.data(), o.pos);
    if (out.size() > reader_fuzz_max_plain) return decompressed::too_large;
    // The reader gives a frame's bytes before it reports that their count is not the declared.
    if (!frames.sound(o.pos, rc, in.pos)) return decompressed::corrupt;
  }
  return decompressed::ok;
}

/// A bound on the bytes a streaming reader can decode from `stream`, of which the one-shot
/// oracle decoded `oracle_out` (up to a corruption, if any): the stream's own bytes plus those,
/// plus one block, since a streaming decoder may emit a block that the oracle, given the whole
/// input at once, still held when it met the corruption after it (found by the campaign: the
/// reader gave 163,840 bytes of a stream where the oracle stopped at 131,072). A zstd block is at
/// most 128 KiB, a deflate window 32 KiB. It bounds the reads that detect a reader that never ends.
inline std::size_t decoded_bound(std::string_view stream, std::string_view oracle_out) {
  return stream.size() + oracle_out.size() + (std::size_t{128} << 10);
}

/// How one format harness wraps its payload.
enum class wrapping { plain, gzip, zstd };

/// Reads `payload` as `format`, plain and (for gzip/zstd) compressed, and compares.
inline std::string check_reader(input_format format, wrapping wrap, std::string_view payload) {
  if (payload.size() > reader_fuzz_max_plain) return "";
  reader_options options;
  options.format = format;
  options.max_record_bytes = reader_fuzz_max_record;
  // A payload with a compression magic is decompressed by the plain read: not plain text.
  const bool plain_text = !has_compression_magic(payload);
  // A few such bytes can expand to megabytes (the campaign found 406 bytes giving 8 MB of line
  // breaks, 0.8 s a run): skip what expands past the bound, as check_compressed does.
  std::size_t bound = 0;
  if (!plain_text) {
    std::string expanded;
    if (decompress_all(payload, expanded) == decompressed::too_large) return "";
    // Found by the campaign: a 17-byte corrupt zstd frame whose RLE block gives 85,697 line
    // breaks before the corrupt block after it.
    bound = decoded_bound(payload, expanded);
  }
  std::vector<read_item>& direct = kept_items(0);
  if (auto e = read_all(std::string(payload),
                        plain_text ? std::optional<std::string_view>(payload) : std::nullopt,
                        options, direct, bound);
      !e.empty()) {
    return "plain: " + e;
  }
  // In memory nothing fails to read; only a CSV header without the text column is fatal.
  if (plain_text && direct.back().status == read_status::failed && format != input_format::csv)
    return "a plain input in memory failed";
  if (wrap == wrapping::plain || !plain_text) return "";
  const std::string packed = wrap == wrapping::gzip ? gzip_bytes(payload) : zstd_bytes(payload);
  if (packed.empty()) return "the harness could not compress the payload";
  std::vector<read_item>& unpacked = kept_items(1);
  const char* name = wrap == wrapping::gzip ? "gzip" : "zstd";
  if (auto e = read_all(packed, payload, options, unpacked); !e.empty())
    return std::string(name) + ": " + e;
  if (unpacked.size() != direct.size() || !same_items(unpacked, direct, direct.size()))
    return std::string(name) + ": records differ from the plain input's";
  return "";
}

/// What a corruption may cost the zstd reader of the sound bytes before it: one decoding step
/// (kDecodeStep in src/io/byte_source.cpp; libzstd does not count what a failing call wrote).
/// gzip costs nothing.
inline constexpr std::size_t reader_zstd_step = std::size_t{4} << 10;

/// The bytes libzstd decodes from `data` before an error, in steps of reader_zstd_step (the
/// oracle's 64 KiB buffers lose up to one buffer; its larger buffers are what let libzstd
/// decode a frame in one pass and check its declared size, so it keeps them).
inline std::string zstd_decoded_in_steps(std::string_view data) {
  std::string out;
  std::string step(reader_zstd_step, '\0');
  ZSTD_DCtx* const ctx = oracle_dctx();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  zstd_frame_sizes frames(data);
  for (;;) {
    ZSTD_outBuffer o{step.data(), step.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(ctx, &o, &in);
    if (ZSTD_isError(rc)) break;
    out.append(step.data(), o.pos);
    if (out.size() > reader_fuzz_max_plain || (o.pos == 0 && in.pos == in.size)) break;
    if (!frames.sound(o.pos, rc, in.pos)) break;
  }
  return out;
}

/// The records before a corruption are read (found: a decoder error in the same read as sound
/// bytes lost up to 256 KiB of them): in a line format (text, JSONL, TSV: a record per line),
/// every line of the oracle's bytes, less `loss` bytes at their end, is consumed before the
/// failure. CSV and WARC records may span lines, so a cut one may be left unread: not checked.
inline std::string check_records_before_corruption(std::string_view plain, std::size_t loss,
                                                   const std::vector<read_item>& got) {
  const auto spans_lines = [](const read_item& it) {
    return it.status == read_status::record &&
           (it.format == input_format::csv || it.format == input_format::warc);
  };
  if (plain.size() <= loss || has_compression_magic(plain) ||
      std::none_of(got.begin(), got.end(),
                   [](const read_item& it) { return it.status == read_status::record; }) ||
      std::any_of(got.begin(), got.end(), spans_lines)) {
    return "";
  }
  const std::size_t cut = plain.rfind('\n', plain.size() - loss - 1);
  if (cut == std::string_view::npos) return "";
  if (got.back().bytes_read < cut + 1) {
    return "records before the corruption were lost: " + std::to_string(got.back().bytes_read) +
           " bytes read, the lines up to " + std::to_string(cut + 1) + " decoded";
  }
  return "";
}

inline std::string check_compressed(std::string_view data) {
  if (!has_compression_magic(data)) return "";  // plain inputs are check_reader's
  std::string plain;
  const decompressed verdict = decompress_all(data, plain);
  if (verdict == decompressed::too_large) return "";
  reader_options options;
  options.max_record_bytes = reader_fuzz_max_record;
  std::vector<read_item>& got = kept_items(0);
  const bool nested = has_compression_magic(plain);  // read again as compressed: no oracle
  const std::optional<std::string_view> known = verdict == decompressed::ok && !nested
                                                    ? std::optional<std::string_view>(plain)
                                                    : std::nullopt;
  // can decode (found by the campaign: a corrupt member expands past its compressed size).
  const std::size_t bound = decoded_bound(data, plain);
  if (auto e = read_all(std::string(data), known, options, got, bound); !e.empty()) return e;
  if (verdict == decompressed::corrupt) {
    if (got.back().status != read_status::failed) return "a corrupt stream was read to its end";
    if (got.back().code != errc::corrupt_data && got.back().code != errc::io_error)
      return "a corrupt stream failed with another code";
    const bool gz = data[0] == '\x1f';
    const std::string_view readable = data.substr(0, gz ? data.size() : zstd_legacy_start(data));
    if (auto e = check_records_before_corruption(gz ? plain : zstd_decoded_in_steps(readable),
                                                 gz ? 0 : reader_zstd_step, got);
        !e.empty()) {
      return e;
    }
    // With skip_failed_inputs the same records come first, then one bad record for the input.
    options.skip_failed_inputs = true;
    std::vector<read_item>& skipped = kept_items(1);
    if (auto e = read_all(std::string(data), std::nullopt, options, skipped, bound); !e.empty())
      return "skipping: " + e;
    const std::size_t n = got.size() - 1;
    if (skipped.size() != n + 2 || !same_items(skipped, got, n))
      return "skipping: other records than without skipping";
    const std::string& why = skipped[n].skip_reason;
    if (skipped[n].status != read_status::bad_record ||
        (why != "truncated_input" && why != "corrupt_input") ||
        skipped[n + 1].status != read_status::end) {
      return "skipping: the failed input is not one bad record";
    }
    return "";
  }
  if (nested) return "";
  if (got.back().status != read_status::end) return "a sound stream failed";
  std::vector<read_item>& direct = kept_items(2);
  if (auto e = read_all(plain, plain, options, direct); !e.empty()) return "oracle: " + e;
  if (direct.size() != got.size() || !same_items(got, direct, got.size()))
    return "records differ from those of the decompressed bytes";
  return "";
}

}  // namespace simdup::fuzz
