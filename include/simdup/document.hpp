// One input record as every reader produces it and every job (fingerprint, dedup, idf) consumes.
#pragma once

#include <simdup/segmenter.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace simdup {

/// Input formats. docs/formats.md specifies each one.
enum class input_format {
  auto_detect,  ///< from the file extension (under .gz/.zst), else sniffed from the first bytes
  jsonl,        ///< one JSON object per line (.jsonl .json .ndjson)
  tsv,          ///< `id<TAB>text` per line, with `\t \n \r \\` escapes (.tsv)
  csv,          ///< RFC 4180, a header row naming the fields (.csv)
  text,         ///< one document per line, id = line number (.txt)
  warc,         ///< WARC/1.0 and 1.1, response and conversion (WET) records (.warc .wet)
  parquet,      ///< Parquet files, one document a row, fields by column name (.parquet)
};

/// Lower-case name of a format ("jsonl"), as accepted by --format.
const char* input_format_name(input_format format) noexcept;

/// A record read from an input. Readers reuse document objects: every field is overwritten by
/// each read, so keeping one document per reader thread avoids allocations.
struct document {
  /// The id as a string: a JSON string's unescaped value, or a JSON number's literal text
  /// ("42", "1.5e3"), or the TSV/CSV id column, or the WARC-Record-ID header. When the record
  /// has no id, a generated one: "SOURCE:LINE" (line formats) or "SOURCE:OFFSET" (WARC).
  std::string id;
  /// The id was a JSON number (or a plain-text line number): write it back unquoted.
  bool id_is_number = false;
  /// The id was generated because the record had none.
  bool id_generated = false;

  /// The document text (JSON string unescaped; TSV escapes decoded; WARC payload without the
  /// HTTP headers). May contain invalid UTF-8: the normaliser repairs and counts it.
  std::string text;
  /// The text is HTML (WARC response records): normalise with html = true.
  bool text_is_html = false;
  /// Optional metadata; empty when the record has none.
  std::string url;
  std::string title;
  /// Unix seconds (UTC). JSONL accepts an integer or an ISO-8601 string; WARC uses WARC-Date.
  std::optional<int64_t> time;
  /// Features supplied by the record (JSONL `features`: ["tok", ...] or [["tok", w], ...]);
  /// when present, they replace the text for fingerprinting.
  std::optional<std::vector<weighted_feature>> features;
  /// Invalid UTF-8 sequences the reader itself replaced by U+FFFD (JSONL only: the JSON parser
  /// needs valid UTF-8). Other formats pass bytes through and the normaliser counts them.
  std::size_t invalid_utf8 = 0;

  /// The record's bytes exactly as read (after decompression), without the line terminator:
  /// the JSON line, the TSV/CSV line(s), the text line, or the whole WARC record (version line,
  /// headers and block, without the two CRLFs that follow it). Written unchanged for kept
  /// records.
  std::string raw;
  /// Read with reader_options::defer_decoding: only `raw` and the provenance are set yet;
  /// decode_record fills the rest.
  bool needs_decoding = false;
  /// The format this record was read as (never auto_detect).
  input_format format = input_format::jsonl;
  /// The input's name as given on the command line; "stdin" for "-".
  std::string source;
  /// 1-based line of the record's first line in the decompressed input (0 for WARC; the
  /// 1-based row number for Parquet, whose `raw` stays empty: its outputs are rewritten from the
  /// file itself).
  uint64_t line = 0;
  /// Byte offset of the record's first byte in the decompressed input.
  uint64_t offset = 0;

  /// "SOURCE:LINE" (or "SOURCE:OFFSET" when line is 0), for messages.
  std::string location() const;
};

/// Whether the document's text is to be normalised as HTML: text_is_html (WARC responses), or a
/// text that opens with a document-level tag (<!doctype, <html, <head, <body, <div, <article,
/// <p; case-insensitive, after white space), as a crawl stored as JSONL has. Every job decides
/// with this one function, so a record gets the same fingerprint from each.
bool document_is_html(const document& doc) noexcept;

}  // namespace simdup
