// Line formats without JSON: plain text, TSV (`id<TAB>text`) and CSV (RFC 4180 with a header).
#include "io/format_reader.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace simdup::detail {

void tsv_unescape(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c != '\\' || i + 1 == in.size()) {
      out.push_back(c);
      continue;
    }
    switch (in[i + 1]) {
      case 't':
        out.push_back('\t');
        ++i;
        break;
      case 'n':
        out.push_back('\n');
        ++i;
        break;
      case 'r':
        out.push_back('\r');
        ++i;
        break;
      case '\\':
        out.push_back('\\');
        ++i;
        break;
      default:
        out.push_back('\\');
    }
  }
}

namespace {

/// Plain text: every line is a document, empty lines included; id = line number, or
/// "SOURCE:LINE" when several inputs are read.
class text_reader final : public format_reader {
 public:
  explicit text_reader(input_context ctx) : ctx_(std::move(ctx)) {}

  read_status next(document& doc, error_info& error) override {
    std::string_view line;
    const line_status st = ctx_.in->next_line(line, error);
    if (st != line_status::ok) return line_failure(st, ctx_, error);
    reset_document(doc, ctx_, input_format::text, ctx_.in->line_number(), ctx_.in->line_offset());
    doc.raw.assign(line);
    doc.text.assign(line);
    if (ctx_.several_inputs) {
      generate_id(doc);
    } else {
      doc.id = std::to_string(doc.line);
      doc.id_is_number = true;
    }
    return read_status::record;
  }

 private:
  input_context ctx_;
};

/// TSV: `id<TAB>text`; the first TAB separates, later TABs belong to the text. Blank lines are
/// not records. An empty id gets a generated one.
class tsv_reader final : public format_reader {
 public:
  explicit tsv_reader(input_context ctx) : ctx_(std::move(ctx)) {}

  read_status next(document& doc, error_info& error) override {
    for (;;) {
      std::string_view line;
      const line_status st = ctx_.in->next_line(line, error);
      if (st != line_status::ok) return line_failure(st, ctx_, error);
      if (line.empty()) continue;
      reset_document(doc, ctx_, input_format::tsv, ctx_.in->line_number(), ctx_.in->line_offset());
      doc.raw.assign(line);
      const std::size_t tab = line.find('\t');
      if (tab == std::string_view::npos) {
        error = record_error(doc, errc::invalid_input, "expected id<TAB>text, found no TAB");
        return read_status::bad_record;
      }
      tsv_unescape(line.substr(0, tab), doc.id);
      tsv_unescape(line.substr(tab + 1), doc.text);
      if (doc.id.empty()) generate_id(doc);
      return read_status::record;
    }
  }

 private:
  input_context ctx_;
};

/// CSV per RFC 4180: fields separated by commas, optionally quoted with '"' (doubled inside);
/// quoted fields may span lines. The first record is the header naming the columns.
class csv_reader final : public format_reader {
 public:
  explicit csv_reader(input_context ctx) : ctx_(std::move(ctx)) {}

  std::string_view header() const noexcept override { return header_; }

  read_status next(document& doc, error_info& error) override {
    if (!have_header_) {
      const read_status st = read_header(doc, error);
      if (st != read_status::record) return st;
    }
    for (;;) {
      reset_document(doc, ctx_, input_format::csv, 0, 0);
      const read_status st = read_record(doc, error);
      if (st != read_status::record) return st;
      if (doc.raw.empty()) continue;  // blank line: not a record
      std::string what;
      if (!split_csv_record(doc.raw, fields_, what)) {
        error = record_error(doc, errc::invalid_input, what);
        return read_status::bad_record;
      }
      if (fields_.size() != columns_) {
        error = record_error(doc, errc::invalid_input,
                             "expected " + std::to_string(columns_) + " fields, found " +
                                 std::to_string(fields_.size()));
        return read_status::bad_record;
      }
      return fill(doc, error);
    }
  }

 private:
  /// Reads the lines of one record (until quotes balance) into doc.raw; record on success. A
  /// record over the limit is still read to its end, its lines counted but not kept, so that it
  /// is one bad record (the lines of a quoted field are not records of their own).
  read_status read_record(document& doc, error_info& error) {
    uint64_t quotes = 0;
    bool first = true;
    bool too_large = false;
    for (;;) {
      std::string_view line;
      const line_status st = ctx_.in->next_line(line, error);
      if (st == line_status::end && !first) {
        error = record_error(doc, errc::invalid_input, "unterminated quoted field");
        return read_status::bad_record;
      }
      if (st != line_status::ok && st != line_status::too_long)
        return line_failure(st, ctx_, error);
      if (first) {
        doc.line = ctx_.in->line_number();
        doc.offset = ctx_.in->line_offset();
        first = false;
      }
      if (st == line_status::too_long) {
        too_large = true;
        quotes += ctx_.in->skipped_quotes();
      } else {
        quotes += static_cast<uint64_t>(std::count(line.begin(), line.end(), '"'));
        if (!too_large) doc.raw.append(line);
      }
      if (doc.raw.size() > ctx_.options->max_record_bytes) too_large = true;
      if (quotes % 2 == 0) {
        if (!too_large) return read_status::record;
        error = record_error(
            doc, errc::too_large,
            "record larger than " + std::to_string(ctx_.options->max_record_bytes) + " bytes");
        return read_status::bad_record;
      }
      // Inside a quoted field: the line break belongs to the field.
      if (!too_large) doc.raw.append(ctx_.in->terminator());
    }
  }

  read_status read_header(document& doc, error_info& error) {
    do {
      reset_document(doc, ctx_, input_format::csv, 0, 0);
      const read_status st = read_record(doc, error);
      if (st == read_status::bad_record) return read_status::failed;
      if (st != read_status::record) return st;
    } while (doc.raw.empty());
    std::string what;
    if (!split_csv_record(doc.raw, fields_, what)) {
      error = record_error(doc, errc::invalid_input, "CSV header: " + what);
      return read_status::failed;
    }
    header_ = doc.raw;
    columns_ = fields_.size();
    const field_names& f = ctx_.options->fields;
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      const std::string& name = fields_[i];
      if (name == f.id) col_id_ = i;
      if (name == f.text) col_text_ = i;
      if (name == f.url) col_url_ = i;
      if (name == f.title) col_title_ = i;
      if (name == f.time) col_time_ = i;
    }
    if (col_text_ == kNone) {
      error = make_error(errc::invalid_input, ctx_.source + ": the CSV header has no column '" +
                                                  f.text + "' (the text field)");
      return read_status::failed;
    }
    have_header_ = true;
    return read_status::record;
  }

  read_status fill(document& doc, error_info& error) {
    doc.text = std::move(fields_[col_text_]);
    if (col_url_ != kNone) doc.url = std::move(fields_[col_url_]);
    if (col_title_ != kNone) doc.title = std::move(fields_[col_title_]);
    if (col_time_ != kNone && !fields_[col_time_].empty()) {
      auto t = parse_time(fields_[col_time_]);
      if (!t) {
        error = record_error(doc, errc::invalid_input,
                             "column '" + ctx_.options->fields.time + "': " + t.error().message);
        return read_status::bad_record;
      }
      doc.time = *t;
    }
    if (col_id_ != kNone) doc.id = std::move(fields_[col_id_]);
    if (doc.id.empty()) generate_id(doc);
    return read_status::record;
  }

  /// Integer unix seconds or ISO-8601.
  static result<int64_t> parse_time(const std::string& s) {
    std::size_t i = s[0] == '-' ? 1 : 0;
    bool integer = i < s.size();
    for (; i < s.size(); ++i) integer = integer && s[i] >= '0' && s[i] <= '9';
    if (integer && s.size() < 19) return static_cast<int64_t>(std::stoll(s));
    return parse_iso8601(s);
  }

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  input_context ctx_;
  bool have_header_ = false;
  std::string header_;
  std::size_t columns_ = 0;
  std::size_t col_id_ = kNone, col_text_ = kNone, col_url_ = kNone, col_title_ = kNone,
              col_time_ = kNone;
  std::vector<std::string> fields_;
};

}  // namespace

bool split_csv_record(std::string_view rec, std::vector<std::string>& out, std::string& what) {
  out.clear();
  std::size_t i = 0;
  for (;;) {
    std::string& field = out.emplace_back();
    if (i < rec.size() && rec[i] == '"') {
      ++i;
      for (;;) {
        const std::size_t q = rec.find('"', i);
        if (q == std::string_view::npos) {
          what = "unterminated quoted field";
          return false;
        }
        field.append(rec.substr(i, q - i));
        if (q + 1 < rec.size() && rec[q + 1] == '"') {
          field.push_back('"');
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      if (i < rec.size() && rec[i] != ',') {
        what = "unexpected character after a closing quote";
        return false;
      }
    } else {
      const std::size_t comma = rec.find(',', i);
      const std::size_t stop = comma == std::string_view::npos ? rec.size() : comma;
      field.assign(rec.substr(i, stop - i));
      i = stop;
    }
    if (i >= rec.size()) return true;
    ++i;  // the comma
  }
}

std::unique_ptr<format_reader> make_text_reader(input_context ctx) {
  return std::make_unique<text_reader>(std::move(ctx));
}
std::unique_ptr<format_reader> make_tsv_reader(input_context ctx) {
  return std::make_unique<tsv_reader>(std::move(ctx));
}
std::unique_ptr<format_reader> make_csv_reader(input_context ctx) {
  return std::make_unique<csv_reader>(std::move(ctx));
}

}  // namespace simdup::detail

namespace simdup {

void append_tsv_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\t':
        out.append("\\t");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\\':
        out.append("\\\\");
        break;
      default:
        out.push_back(c);
    }
  }
}

}  // namespace simdup
