// JSONL: one JSON object per line, parsed in place with simdjson On-Demand.
#include "io/format_reader.hpp"

#include <simdup/utf8.hpp>

#include <simdjson.h>

#include <cmath>
#include <string>

namespace simdup::detail {
namespace {

namespace od = simdjson::ondemand;

static_assert(kLinePadding >= simdjson::SIMDJSON_PADDING);

/// True for a JSON number token (RFC 8259 grammar), so number ids can be echoed verbatim.
bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == s.size();
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// One JSON line into a document's fields, with a parser of its own (one per thread).
class jsonl_decoder {
 public:
  explicit jsonl_decoder(const field_names& fields) : f_(&fields) {}
  void use_fields(const field_names& fields) { f_ = &fields; }

  /// Parses `line` (followed by kLinePadding readable bytes) into `doc`; false with `what`.
  bool parse(std::string_view line, document& doc, std::string& what) {
    auto json = parser_.iterate(line.data(), line.size(), line.size() + kLinePadding);
    if (json.error() == simdjson::UTF8_ERROR) {
      // simdjson requires valid UTF-8; repair a copy (counted) and parse that instead.
      repaired_.clear();
      doc.invalid_utf8 = utf8::append_repaired(line, repaired_);
      const std::size_t size = repaired_.size();
      repaired_.append(kLinePadding, '\0');
      json = parser_.iterate(repaired_.data(), size, repaired_.size());
    }
    if (json.error()) return fail(what, "invalid JSON", json.error());
    od::object obj;
    if (auto e = json.get_object().get(obj)) {
      return fail(what, e == simdjson::INCORRECT_TYPE ? "expected a JSON object" : "invalid JSON",
                  e);
    }
    bool have_text = false;
    for (auto field : obj) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(what, "invalid JSON", e);
      od::value value;
      if (auto e = field.value().get(value)) return fail(what, "invalid JSON", e);
      if (key == f_->text) {
        if (!read_string(value, key, doc.text, what, have_text)) return false;
      } else if (key == f_->id) {
        if (!read_id(value, doc, what)) return false;
      } else if (key == f_->url) {
        bool unused = false;
        if (!read_string(value, key, doc.url, what, unused)) return false;
      } else if (key == f_->title) {
        bool unused = false;
        if (!read_string(value, key, doc.title, what, unused)) return false;
      } else if (key == f_->time) {
        if (!read_time(value, doc, what)) return false;
      } else if (key == f_->features) {
        if (!read_features(value, doc, what)) return false;
      }
      // Other fields are skipped by the iteration (and still checked for syntax).
    }
    // Anything after the object (a second value, garbage) makes the line malformed.
    if (!json.current_location().error()) {
      what = "invalid JSON: unexpected content after the object";
      return false;
    }
    if (!have_text && !doc.features) {
      what = "missing text field '" + f_->text + "'";
      return false;
    }
    if (doc.id.empty() && !doc.id_is_number) generate_id(doc);
    return true;
  }

  static bool fail(std::string& what, std::string_view context, simdjson::error_code e) {
    what = std::string(context) + ": " + simdjson::error_message(e);
    return false;
  }

  /// A string field (null means absent).
  static bool read_string(od::value& value, std::string_view key, std::string& out,
                          std::string& what, bool& present) {
    od::json_type type;
    if (auto e = value.type().get(type)) return fail(what, "invalid JSON", e);
    if (type == od::json_type::null) {
      if (auto e = value.is_null().error()) return fail(what, "invalid JSON", e);
      return true;
    }
    std::string_view s;
    if (type != od::json_type::string) {
      what = "field '" + std::string(key) + "' must be a string";
      return false;
    }
    if (auto e = value.get_string().get(s)) return fail(what, "invalid JSON", e);
    out.assign(s);
    present = true;
    return true;
  }

  bool read_id(od::value& value, document& doc, std::string& what) {
    od::json_type type;
    if (auto e = value.type().get(type)) return fail(what, "invalid JSON", e);
    if (type == od::json_type::number) {
      const std::string_view token = trim_right(value.raw_json_token());
      if (!is_json_number(token)) {
        what = "invalid JSON: malformed number in field '" + f_->id + "'";
        return false;
      }
      doc.id.assign(token);
      doc.id_is_number = true;
      return true;
    }
    bool present = false;
    if (type == od::json_type::string || type == od::json_type::null) {
      doc.id_is_number = false;
      return read_string(value, f_->id, doc.id, what, present);
    }
    what = "field '" + f_->id + "' must be a string or a number";
    return false;
  }

  bool read_time(od::value& value, document& doc, std::string& what) {
    od::json_type type;
    if (auto e = value.type().get(type)) return fail(what, "invalid JSON", e);
    if (type == od::json_type::null) {
      if (auto e = value.is_null().error()) return fail(what, "invalid JSON", e);
      return true;
    }
    if (type == od::json_type::number) {
      double d = 0;
      int64_t i = 0;
      if (!value.get_int64().get(i)) {
        doc.time = i;
      } else if (!value.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9.0e18) {
        doc.time = static_cast<int64_t>(d);  // fractional seconds are truncated
      } else {
        what = "field '" + f_->time + "' is not a valid unix time";
        return false;
      }
      return true;
    }
    if (type == od::json_type::string) {
      std::string_view s;
      if (auto e = value.get_string().get(s)) return fail(what, "invalid JSON", e);
      auto t = parse_iso8601(s);
      if (!t) {
        what = "field '" + f_->time + "': " + t.error().message;
        return false;
      }
      doc.time = *t;
      return true;
    }
    what = "field '" + f_->time + "' must be unix seconds or an ISO-8601 string";
    return false;
  }

  /// ["tok", ...] or [["tok", weight], ...] (the two forms may be mixed).
  bool read_features(od::value& value, document& doc, std::string& what) {
    const std::string bad =
        "field '" + f_->features + "' must be [\"tok\", ...] or [[\"tok\", w], ...]";
    od::array arr;
    if (value.get_array().get(arr)) {
      what = bad;
      return false;
    }
    auto& feats = doc.features.emplace();
    for (auto item : arr) {
      od::value v;
      if (auto e = item.get(v)) return fail(what, "invalid JSON", e);
      od::json_type type;
      if (auto e = v.type().get(type)) return fail(what, "invalid JSON", e);
      if (type == od::json_type::string) {
        std::string_view s;
        if (auto e = v.get_string().get(s)) return fail(what, "invalid JSON", e);
        feats.push_back(weighted_feature{std::string(s), 1.0});
        continue;
      }
      od::array pair;
      if (type != od::json_type::array || v.get_array().get(pair)) {
        what = bad;
        return false;
      }
      weighted_feature wf;
      int n = 0;
      for (auto part : pair) {
        if (n == 0) {
          std::string_view s;
          if (part.get_string().get(s)) {
            what = bad;
            return false;
          }
          wf.text.assign(s);
        } else if (n == 1) {
          if (part.get_double().get(wf.weight) || !std::isfinite(wf.weight)) {
            what = bad;
            return false;
          }
        }
        ++n;
      }
      if (n != 2) {
        what = bad;
        return false;
      }
      feats.push_back(std::move(wf));
    }
    return true;
  }

  const field_names* f_;
  od::parser parser_;
  std::string repaired_;
};

class jsonl_reader final : public format_reader {
 public:
  explicit jsonl_reader(input_context ctx) : ctx_(std::move(ctx)), decoder_(ctx_.options->fields) {}

  read_status next(document& doc, error_info& error) override {
    for (;;) {
      std::string_view line;
      const line_status st = ctx_.in->next_line(line, error);
      if (st != line_status::ok) {
        if (st == line_status::too_long) {
          reset_document(doc, ctx_, input_format::jsonl, ctx_.in->line_number(),
                         ctx_.in->line_offset());
        }
        return line_failure(st, ctx_, error);
      }
      if (is_blank(line)) continue;  // blank lines separate nothing: not records
      if (ctx_.options->defer_decoding) {
        // Only the frame: the fields are cleared and filled by decode_record, on the thread
        // that uses them.
        set_provenance(doc, ctx_, input_format::jsonl, ctx_.in->line_number(),
                       ctx_.in->line_offset());
        doc.raw.reserve(line.size() + kLinePadding);  // decode_jsonl pads within it
        doc.raw.assign(line);
        doc.needs_decoding = true;
        return read_status::record;
      }
      reset_document(doc, ctx_, input_format::jsonl, ctx_.in->line_number(),
                     ctx_.in->line_offset());
      doc.raw.assign(line);
      std::string what;
      if (!decoder_.parse(line, doc, what)) {
        error = record_error(doc, errc::invalid_input, what);
        return read_status::bad_record;
      }
      return read_status::record;
    }
  }

 private:
  input_context ctx_;
  jsonl_decoder decoder_;
};

}  // namespace

read_status decode_jsonl(document& doc, const field_names& fields, error_info& error) {
  thread_local jsonl_decoder decoder(fields);
  decoder.use_fields(fields);
  clear_fields(doc);
  doc.needs_decoding = false;
  // The parser reads up to kLinePadding bytes past the line: zeros within raw's own buffer.
  const std::size_t size = doc.raw.size();
  doc.raw.append(kLinePadding, '\0');
  doc.raw.resize(size);
  std::string what;
  if (!decoder.parse(doc.raw, doc, what)) {
    error = record_error(doc, errc::invalid_input, what);
    return read_status::bad_record;
  }
  return read_status::record;
}

std::unique_ptr<format_reader> make_jsonl_reader(input_context ctx) {
  return std::make_unique<jsonl_reader>(std::move(ctx));
}

}  // namespace simdup::detail
