// WARC/1.0 and WARC/1.1 (ISO 28500): one document per `response` record (HTML payload, HTTP
// headers stripped) or `conversion` record (WET plain text). Other record types are skipped.
#include "io/format_reader.hpp"

#include <charconv>
#include <string>

#include "util/ascii.hpp"

namespace simdup::detail {
namespace {

/// Offset of the first byte after the HTTP header block (CRLFCRLF, or LFLF from sloppy
/// servers); 0 when the block has no HTTP header (then all of it is payload).
std::size_t http_body_start(std::string_view block) {
  if (!block.starts_with("HTTP/")) return 0;
  const std::size_t crlf = block.find("\r\n\r\n");
  const std::size_t lf = block.find("\n\n");
  if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf < lf)) {
    return crlf + 4;
  }
  if (lf != std::string_view::npos) return lf + 2;
  return block.size();  // headers only, no body
}

class warc_reader final : public format_reader {
 public:
  explicit warc_reader(input_context ctx) : ctx_(std::move(ctx)) {}

  read_status next(document& doc, error_info& error) override {
    for (;;) {
      if (!have_pending_) {
        const read_status st = find_version_line(doc, error);
        if (st != read_status::record) return st;
      }
      have_pending_ = false;
      reset_document(doc, ctx_, input_format::warc, 0, pending_offset_);
      const read_status rs = read_record(pending_version_, doc, error);
      if (rs == read_status::end) continue;  // a record type we do not turn into documents
      return rs;
    }
  }

 private:
  /// Finds the next version line (skipping the blank lines that end the previous record) and
  /// keeps it as pending. Other bytes before it are reported once as a bad record; the record
  /// found is still read by the next call.
  read_status find_version_line(document& doc, error_info& error) {
    bool garbage = false;
    for (;;) {
      std::string_view line;
      const line_status st = ctx_.in->next_line(line, error);
      if (st == line_status::too_long) {
        garbage = true;
        continue;
      }
      if (st != line_status::ok) {
        if (st == line_status::end && garbage) break;
        return line_failure(st, ctx_, error);
      }
      if (line.starts_with("WARC/")) {
        pending_version_.assign(line);
        pending_offset_ = ctx_.in->line_offset();
        have_pending_ = true;
        break;
      }
      if (!line.empty()) garbage = true;
    }
    if (!garbage) return read_status::record;
    reset_document(doc, ctx_, input_format::warc, 0, ctx_.in->line_offset());
    error = record_error(doc, errc::invalid_input,
                         "malformed WARC data skipped (expected a "
                         "WARC/1.0 or WARC/1.1 version line)");
    return read_status::bad_record;
  }

  /// Reads headers and block after the version line `version`.
  read_status read_record(std::string_view version, document& doc, error_info& error) {
    doc.raw.assign(version);
    doc.raw.append(ctx_.in->terminator());
    std::string type;
    std::size_t length = 0;
    bool have_length = false;
    for (;;) {
      std::string_view line;
      const line_status st = ctx_.in->next_line(line, error);
      if (st == line_status::end) {
        error = record_error(doc, errc::invalid_input, "truncated WARC record headers");
        return read_status::bad_record;
      }
      if (st != line_status::ok) return line_failure(st, ctx_, error);
      doc.raw.append(line);
      doc.raw.append(ctx_.in->terminator());
      if (line.empty()) break;
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;  // tolerate junk header lines
      const std::string_view name = trim_blanks(line.substr(0, colon));
      const std::string_view value = trim_blanks(line.substr(colon + 1));
      if (iequals(name, "WARC-Type")) {
        type.assign(value);
      } else if (iequals(name, "Content-Length")) {
        const auto res = std::from_chars(value.data(), value.data() + value.size(), length);
        have_length = res.ec == std::errc{} && res.ptr == value.data() + value.size();
      } else if (iequals(name, "WARC-Record-ID")) {
        doc.id.assign(value);
      } else if (iequals(name, "WARC-Target-URI")) {
        doc.url.assign(value);
      } else if (iequals(name, "WARC-Date")) {
        if (auto t = parse_iso8601(value)) doc.time = *t;
      }
    }
    if (!have_length) {
      error = record_error(doc, errc::invalid_input, "WARC record without a valid Content-Length");
      return read_status::bad_record;
    }
    const bool too_large = length > ctx_.options->max_record_bytes;
    const std::size_t block_start = doc.raw.size();
    // A block over the limit is skipped, not read, so that it is one bad record (its lines are
    // not WARC data to resynchronise on, and one may even start with "WARC/").
    auto got = ctx_.in->read_exact(length, too_large ? nullptr : &doc.raw);
    if (!got) {
      error = std::move(got).error();
      return read_status::failed;
    }
    if (!*got) {
      error = record_error(doc, errc::invalid_input,
                           "truncated WARC record (the input ends "
                           "inside its block)");
      return read_status::bad_record;
    }
    if (too_large) {
      error = record_error(
          doc, errc::too_large,
          "WARC record block of " + std::to_string(length) + " bytes exceeds the record limit");
      return read_status::bad_record;
    }
    if (version != "WARC/1.0" && version != "WARC/1.1") {
      // Its headers and block were still read, so the next record starts cleanly.
      error = record_error(doc, errc::invalid_input,
                           "unsupported WARC version '" + std::string(version.substr(0, 16)) + "'");
      return read_status::bad_record;
    }
    const std::string_view block = std::string_view(doc.raw).substr(block_start);
    if (type == "response") {
      doc.text.assign(block.substr(http_body_start(block)));
      doc.text_is_html = true;
    } else if (type == "conversion") {
      doc.text.assign(block);
    } else {
      return read_status::end;
    }
    if (doc.id.empty()) generate_id(doc);
    return read_status::record;
  }

  input_context ctx_;
  std::string pending_version_;
  uint64_t pending_offset_ = 0;
  bool have_pending_ = false;
};

}  // namespace

std::unique_ptr<format_reader> make_warc_reader(input_context ctx) {
  return std::make_unique<warc_reader>(std::move(ctx));
}

}  // namespace simdup::detail
