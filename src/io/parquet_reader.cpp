// Parquet inputs: DuckDB reads the file (read_parquet, streamed chunk by chunk, row groups in
// file order) and hands over only the columns the fields name; this file maps them to documents
// with the same rules as the JSONL reader (null means absent, a missing text is a bad record).
#include "io/format_reader.hpp"
#include "io/parquet.hpp"

#if SIMDUP_WITH_PARQUET
#include "io/byte_source.hpp"
#include "io/parquet_duckdb.hpp"

#include <algorithm>
#include <cmath>
#endif

namespace simdup::detail {

bool parquet_supported() noexcept {
  return SIMDUP_WITH_PARQUET + 0 != 0;
}

error_info parquet_unsupported(std::string_view what) {
  return make_error(errc::unsupported,
                    std::string(what) +
                        ": a Parquet file, but this simdup was built without Parquet support "
                        "(configured without DuckDB: see docs/install.md)");
}

#if !SIMDUP_WITH_PARQUET

result<std::unique_ptr<format_reader>> make_parquet_reader(input_context ctx,
                                                           const std::string& /*path*/,
                                                           const parquet_slice& /*slice*/) {
  return parquet_unsupported(ctx.source);
}

#else

namespace {

/// How a field's column reaches C++: the query casts every usable type to one of these.
enum class column_kind {
  absent,       ///< no such column: the field is absent in every row
  string,       ///< VARCHAR or BLOB, read as bytes
  number_text,  ///< a numeric id, cast to its VARCHAR literal (written back unquoted)
  int64,        ///< time: integer seconds, or a DATE/TIMESTAMP converted to them
  float64,      ///< time: fractional or very large seconds, truncated as JSONL does
  iso_text,     ///< time: an ISO-8601 string
};

struct field_column {
  column_kind kind = column_kind::absent;
  std::string name;  ///< the field's column name (for messages)
  idx_t index = 0;   ///< in the query's select list
  // The current chunk's vector.
  void* data = nullptr;
  uint64_t* validity = nullptr;

  bool valid(idx_t row) const {
    return validity == nullptr || duck::duckdb_validity_row_is_valid(validity, row);
  }
  std::string_view text(idx_t row) const {
    auto* s = static_cast<duckdb_string_t*>(data) + row;
    return {duck::duckdb_string_t_data(s), duck::duckdb_string_t_length(*s)};
  }
};

bool is_one_of(std::string_view type, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (type == n) return true;
  }
  return false;
}

bool is_parquet_integer_type(std::string_view t) {
  return is_one_of(
      t, {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"});
}

bool is_parquet_numeric_type(std::string_view t) {
  return is_parquet_integer_type(t) || t.starts_with("DECIMAL") ||
         is_one_of(t, {"UBIGINT", "HUGEINT", "UHUGEINT", "FLOAT", "DOUBLE"});
}

bool is_parquet_string_type(std::string_view t) {
  return t == "VARCHAR" || t == "BLOB";
}

bool is_parquet_time_type(std::string_view t) {
  return t == "DATE" || t.starts_with("TIMESTAMP");
}

/// The select-list expression and kind of a field's column of type `type`; empty when the type
/// cannot carry the field.
std::pair<std::string, column_kind> select_for(std::string_view field, std::string_view type,
                                               const std::string& column) {
  const std::string c = duck::identifier(column);
  if (field == "text" || field == "url" || field == "title") {
    if (is_parquet_string_type(type)) return {c, column_kind::string};
    return {};
  }
  if (field == "id") {
    if (is_parquet_string_type(type)) return {c, column_kind::string};
    if (is_parquet_numeric_type(type))
      return {"CAST(" + c + " AS VARCHAR)", column_kind::number_text};
    return {};
  }
  // time
  if (is_parquet_integer_type(type) || type == "BIGINT")
    return {"CAST(" + c + " AS BIGINT)", column_kind::int64};
  if (is_parquet_numeric_type(type)) return {"CAST(" + c + " AS DOUBLE)", column_kind::float64};
  if (is_parquet_time_type(type)) return {"(epoch_ms(" + c + ") // 1000)", column_kind::int64};
  if (type == "VARCHAR") return {c, column_kind::iso_text};
  return {};
}

const char* expected_type(std::string_view field) {
  if (field == "id") return "a string or number column";
  if (field == "time") return "an integer, floating-point, DATE, TIMESTAMP or string column";
  return "a string column (VARCHAR or BLOB)";
}

class parquet_reader final : public format_reader {
 public:
  static result<std::unique_ptr<format_reader>> open(input_context ctx, const std::string& path,
                                                     const parquet_slice& slice) {
    // The same checks and messages as every other input: missing, a directory, unreadable.
    if (auto src = open_source(path, ctx.source, nullptr); !src) return std::move(src).error();
    // One DuckDB thread: DuckDB decodes in the reading thread itself, as it fetches each chunk;
    // more threads spent more CPU for the same rows (waiting for each other) while the job's
    // own threads fingerprint them (docs/performance.md).
    auto con = duck::connection::open_streaming();
    if (!con) return std::move(con).error();
    auto r = std::unique_ptr<parquet_reader>(new parquet_reader(std::move(ctx), std::move(*con)));
    if (auto st = r->start(path, slice); !st) return std::move(st).error();
    return std::unique_ptr<format_reader>(std::move(r));
  }

  read_status next(document& doc, error_info& error) override {
    for (;;) {
      if (pos_ == size_) {
        if (!fetch(error)) return done_ ? read_status::end : read_status::failed;
        continue;
      }
      const idx_t i = pos_++;
      ++row_;
      reset_document(doc, ctx_, input_format::parquet, row_, 0);
      return fill(doc, i, error);
    }
  }

 private:
  parquet_reader(input_context ctx, duck::connection con)
      : ctx_(std::move(ctx)), con_(std::move(con)) {}

  /// Reads the schema, maps the fields to columns and starts the streamed query.
  status start(const std::string& path, const parquet_slice& slice) {
    const std::string from = "read_parquet(" + duck::literal(path) + ", binary_as_string = false)";
    auto schema = describe(from);
    if (!schema) return std::move(schema).error();
    const field_names& f = ctx_.options->fields;
    const std::pair<const std::string*, field_column*> fields[] = {
        {&f.text, &text_}, {&f.id, &id_}, {&f.url, &url_}, {&f.title, &title_}, {&f.time, &time_}};
    const char* roles[] = {"text", "id", "url", "title", "time"};
    std::string select;
    idx_t index = 0;
    for (std::size_t k = 0; k < std::size(fields); ++k) {
      // Not a structured binding: clang 14 refuses to capture one in the lambda below.
      const std::string* name = fields[k].first;
      field_column* col = fields[k].second;
      col->name = *name;
      const auto it = std::find_if(schema->begin(), schema->end(),
                                   [&](const auto& c) { return c.first == *name; });
      if (it == schema->end()) continue;
      auto [expr, kind] = select_for(roles[k], it->second, it->first);
      if (expr.empty()) {
        return make_error(errc::invalid_input, ctx_.source + ": column '" + *name + "' (the " +
                                                   roles[k] + " field) is " + it->second +
                                                   "; it must be " + expected_type(roles[k]));
      }
      col->kind = kind;
      col->index = index++;
      select += (select.empty() ? "" : ", ") + expr;
    }
    if (text_.kind == column_kind::absent) {
      std::string columns;
      for (const auto& c : *schema) columns += (columns.empty() ? "" : ", ") + c.first;
      return make_error(errc::invalid_input,
                        ctx_.source + ": the Parquet file has no column '" + f.text +
                            "' (the text field; its columns: " + columns + ")");
    }
    std::string sql = "SELECT " + select + " FROM " + from;
    if (slice.rows != kAllRows) {
      // simdup.dask's partitions: whole row groups, which DuckDB skips by their row numbers.
      sql = "SELECT " + select + " FROM read_parquet(" + duck::literal(path) +
            ", binary_as_string = false, file_row_number = true) WHERE file_row_number >= " +
            std::to_string(slice.first_row) + " AND file_row_number < " +
            std::to_string(slice.first_row + slice.rows);
      row_ = slice.first_row;
    }
    auto st = duck::statement::prepare(con_, sql);
    if (!st) return corrupt(st.error().message);
    auto s = duck::stream::execute(*st);
    if (!s) return corrupt(s.error().message);
    stream_ = std::move(*s);
    return {};
  }

  /// (name, type) of every column.
  result<std::vector<std::pair<std::string, std::string>>> describe(const std::string& from) {
    auto st = duck::statement::prepare(con_, "DESCRIBE SELECT * FROM " + from);
    if (!st) return corrupt(st.error().message);
    auto s = duck::stream::execute(*st);
    if (!s) return corrupt(s.error().message);
    std::vector<std::pair<std::string, std::string>> columns;
    while (duckdb_data_chunk chunk = s->next()) {
      field_column name, type;
      bind(name, chunk, 0);
      bind(type, chunk, 1);
      for (idx_t i = 0; i < duck::duckdb_data_chunk_get_size(chunk); ++i) {
        columns.emplace_back(name.text(i), type.text(i));
      }
    }
    if (std::string e = s->error(); !e.empty()) return corrupt(e);
    return columns;
  }

  error_info corrupt(const std::string& duckdb_message) const {
    return make_error(errc::corrupt_data,
                      ctx_.source + ": not a readable Parquet file: " + duckdb_message);
  }

  static void bind(field_column& c, duckdb_data_chunk chunk, idx_t index) {
    duckdb_vector v = duck::duckdb_data_chunk_get_vector(chunk, index);
    c.data = duck::duckdb_vector_get_data(v);
    c.validity = duck::duckdb_vector_get_validity(v);
  }

  /// The next chunk; false at the end (done_) or on an error (a corrupt page, an I/O error).
  bool fetch(error_info& error) {
    duckdb_data_chunk chunk = stream_.next();
    if (chunk == nullptr) {
      if (std::string e = stream_.error(); !e.empty()) {
        error = make_error(errc::corrupt_data, ctx_.source + ": corrupt Parquet data after row " +
                                                   std::to_string(row_) + ": " + e);
        return false;
      }
      done_ = true;
      return false;
    }
    for (field_column* c : {&text_, &id_, &url_, &title_, &time_}) {
      if (c->kind != column_kind::absent) bind(*c, chunk, c->index);
    }
    size_ = duck::duckdb_data_chunk_get_size(chunk);
    pos_ = 0;
    return true;
  }

  read_status fill(document& doc, idx_t i, error_info& error) {
    if (!text_.valid(i)) {
      error = record_error(doc, errc::invalid_input, "missing text field '" + text_.name + "'");
      return read_status::bad_record;
    }
    const std::string_view text = text_.text(i);
    if (text.size() > ctx_.options->max_record_bytes) {
      error = record_error(doc, errc::too_large,
                           "record larger than " + std::to_string(ctx_.options->max_record_bytes) +
                               " bytes, skipped");
      return read_status::bad_record;
    }
    doc.text.assign(text);
    if (url_.kind != column_kind::absent && url_.valid(i)) doc.url.assign(url_.text(i));
    if (title_.kind != column_kind::absent && title_.valid(i)) doc.title.assign(title_.text(i));
    if (id_.kind != column_kind::absent && id_.valid(i)) {
      doc.id.assign(id_.text(i));
      doc.id_is_number = id_.kind == column_kind::number_text;
      if (doc.id_is_number && !finite_number(doc.id)) {
        error = record_error(doc, errc::invalid_input,
                             "column '" + id_.name + "' holds " + doc.id + ", not a JSON number");
        return read_status::bad_record;
      }
    }
    if (time_.kind != column_kind::absent && time_.valid(i)) {
      if (auto st = read_time(doc, i); !st) {
        error = record_error(doc, errc::invalid_input, st.error().message);
        return read_status::bad_record;
      }
    }
    if (doc.id.empty() && !doc.id_is_number) generate_id(doc);
    return read_status::record;
  }

  status read_time(document& doc, idx_t i) const {
    switch (time_.kind) {
      case column_kind::int64:
        doc.time = static_cast<const int64_t*>(time_.data)[i];
        return {};
      case column_kind::float64: {
        const double d = static_cast<const double*>(time_.data)[i];
        if (!std::isfinite(d) || std::fabs(d) >= 9.0e18) {
          return make_error(errc::invalid_input,
                            "column '" + time_.name + "' is not a valid unix time");
        }
        doc.time = static_cast<int64_t>(d);  // fractional seconds are truncated
        return {};
      }
      case column_kind::iso_text: {
        auto t = parse_iso8601(time_.text(i));
        if (!t)
          return make_error(errc::invalid_input,
                            "column '" + time_.name + "': " + t.error().message);
        doc.time = *t;
        return {};
      }
      default:
        return {};
    }
  }

  /// DuckDB writes a float's infinities and NaN as "inf" and "nan": not ids duplicates.jsonl
  /// can write unquoted.
  static bool finite_number(std::string_view s) {
    return !s.empty() && s.find_first_of("in") == std::string_view::npos;
  }

  input_context ctx_;
  duck::connection con_;
  duck::stream stream_;
  field_column text_, id_, url_, title_, time_;
  idx_t pos_ = 0, size_ = 0;
  uint64_t row_ = 0;  ///< rows returned so far (1-based number of the last one)
  bool done_ = false;
};

}  // namespace

result<std::unique_ptr<format_reader>> make_parquet_reader(input_context ctx,
                                                           const std::string& path,
                                                           const parquet_slice& slice) {
  return parquet_reader::open(std::move(ctx), path, slice);
}

#endif  // SIMDUP_WITH_PARQUET

}  // namespace simdup::detail
