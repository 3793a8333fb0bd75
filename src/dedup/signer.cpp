// Per-document work of the dedup job (the parallel stage): normalise, then derive the exact keys
// and the fingerprint from the normalised text, and the shingle hashes from verification's own
// text (verify_normalize_options: punctuation kept, CJK text by its content). With verification
// on, both texts come from one normalisation (normalizer_pair).
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/normalize.hpp>
#include <simdup/normalizer_pair.hpp>
#include <simdup/utf8.hpp>

#include <simdjson.h>

#include "io/format_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace simdup {

struct document_signer::impl {
  dedup_options options;
  normalizer plain;
  normalizer html;
  // With verification: the fingerprint's text and the verification shingles' text
  // (verify_normalize_options: punctuation kept, CJK content) of plain and HTML documents.
  std::optional<normalizer_pair> pair_plain;
  std::optional<normalizer_pair> pair_html;
  // Fingerprints already-normalised text (every normalise step off), so the text is normalised
  // once per document; in a compat mode the compat fingerprinter sees the raw text instead,
  // because those modes define their own normalisation.
  fingerprinter on_normalized;
  bool compat = false;
};

namespace {

// A number, or -infinity (also for NaN, which would break the keep order).
double parse_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || std::isnan(value)) return -INFINITY;
  return value;
}

// The keep field of a JSONL record or CSV record (the column the header names), or -infinity.
double read_keep_field(const document& doc, const std::string& field, std::string_view header) {
  if (doc.format == input_format::csv) {
    // The column index is found once per header (per thread).
    thread_local std::string last_header;
    thread_local std::size_t column = SIZE_MAX;
    thread_local std::vector<std::string> fields;
    if (header != last_header) {
      last_header = header;
      std::string what;
      detail::split_csv_record(header, fields, what);
      const auto it = std::find(fields.begin(), fields.end(), field);
      column = it == fields.end() ? SIZE_MAX : static_cast<std::size_t>(it - fields.begin());
    }
    if (column == SIZE_MAX) return -INFINITY;
    std::string what;  // the reader split this record already: it is well formed
    detail::split_csv_record(doc.raw, fields, what);
    return column < fields.size() ? parse_number(fields[column]) : -INFINITY;
  }
  if (doc.format != input_format::jsonl) return -INFINITY;
  thread_local simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(doc.raw);
  simdjson::ondemand::document json;
  if (parser.iterate(padded).get(json) != simdjson::SUCCESS) return -INFINITY;
  double value = 0;
  if (json.find_field_unordered(field).get_double().get(value) != simdjson::SUCCESS) {
    return -INFINITY;
  }
  return std::isnan(value) ? -INFINITY : value;
}

}  // namespace

result<document_signer> document_signer::create(const dedup_options& options) {
  if (auto st = options.detection.validate(); !st) return std::move(st).error();
  const fingerprint_options& fingerprint = options.detection.fingerprint;
  normalize_options plain_options = fingerprint.normalize;
  normalize_options html_options = fingerprint.normalize;
  html_options.html = true;
  auto plain = normalizer::create(plain_options);
  if (!plain) return std::move(plain).error();
  auto html = normalizer::create(html_options);
  if (!html) return std::move(html).error();
  std::optional<normalizer_pair> pair_plain;
  std::optional<normalizer_pair> pair_html;
  if (options.detection.verify && options.near_layer) {
    auto made_plain =
        normalizer_pair::create(plain_options, verify_normalize_options(plain_options));
    if (!made_plain) return std::move(made_plain).error();
    auto made_html = normalizer_pair::create(html_options, verify_normalize_options(html_options));
    if (!made_html) return std::move(made_html).error();
    pair_plain = std::move(made_plain).value();
    pair_html = std::move(made_html).value();
  }

  const bool compat = fingerprint.compat != compat_mode::none;
  fingerprint_options inner = fingerprint;
  if (!compat) inner.normalize = normalize_options{false, false, false, false, false, false, false};
  auto fp = fingerprinter::create(inner);
  if (!fp) return std::move(fp).error();
  return document_signer(std::make_unique<impl>(
      impl{options, std::move(plain).value(), std::move(html).value(), std::move(pair_plain),
           std::move(pair_html), std::move(fp).value(), compat}));
}

void document_signer::sign(const document& doc, doc_signature& out,
                           std::string_view csv_header) const {
  const impl& s = *impl_;
  thread_local std::string normalized;
  thread_local std::string content;  // verification's text
  normalize_stats stats;
  const bool html = document_is_html(doc);
  if (s.pair_plain) {
    (html ? *s.pair_html : *s.pair_plain).normalize(doc.text, normalized, content, &stats);
  } else {
    (html ? s.html : s.plain).normalize(doc.text, normalized, &stats);
  }

  fingerprint_result fp;
  if (doc.features) {
    fp = s.on_normalized.fingerprint_features(*doc.features);
  } else {
    fp = s.on_normalized.fingerprint(s.compat ? std::string_view(doc.text)
                                              : std::string_view(normalized));
  }
  out.fingerprint = fp.fingerprint;
  out.has_fingerprint = fp.status == fingerprint_status::ok;
  out.content_key = s.options.content_layer ? exact_key(normalized) : 0;
  out.url_key = s.options.url_layer ? url_key(doc.url) : 0;
  out.title_key = 0;
  if (s.options.title_layer && !doc.title.empty()) {
    out.title_key = exact_key(s.plain.normalize(doc.title));
  }
  out.length = static_cast<uint32_t>(std::min<std::size_t>(doc.text.size(), UINT32_MAX));
  out.time = doc.time.value_or(std::numeric_limits<int64_t>::min());
  out.field = s.options.keep.rule == keep_rule::field
                  ? read_keep_field(doc, s.options.keep.field, csv_header)
                  : -INFINITY;
  out.invalid_utf8 = static_cast<uint32_t>(doc.invalid_utf8 + stats.invalid_utf8);
  out.html = html;
  if (s.pair_plain && out.has_fingerprint) {
    // Band keys from the whole set, then the bottom-k cut: the one-permutation bins of the
    // smallest k hashes alone cover only the lowest few bins.
    const std::size_t max_hashes = s.options.detection.verify->max_hashes;
    const bool bands = s.options.detection.minhash.bands > 0;
    shingle_hashes(content, s.options.detection.verify->shingle_width, bands ? 0 : max_hashes,
                   out.shingles);
    minhash_band_keys(out.shingles, s.options.detection.minhash, out.band_keys);
    if (max_hashes != 0 && out.shingles.size() > max_hashes) out.shingles.resize(max_hashes);
  } else {
    out.shingles.clear();
    out.band_keys.clear();
  }
  // A huge record's texts are not kept by the thread for the rest of the run (the second
  // pass reads it again beside them).
  constexpr std::size_t kKeepBytes = std::size_t{16} << 20;
  if (normalized.capacity() > kKeepBytes) std::string().swap(normalized);
  if (content.capacity() > kKeepBytes) std::string().swap(content);
}

document_signer::document_signer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
document_signer::document_signer(document_signer&&) noexcept = default;
document_signer& document_signer::operator=(document_signer&&) noexcept = default;
document_signer::~document_signer() = default;

}  // namespace simdup
