// A small, fast JSON writer for every adapter (CLI, service, reports). Output is always valid
// UTF-8 JSON: ill-formed UTF-8 in strings is replaced by U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::json {

/// Appends `s` as a JSON string literal, quotes included. Escapes `"` `\` and control
/// characters (\n \r \t \b \f, others as \u00XX); keeps other UTF-8 as is. Returns the number
/// of ill-formed UTF-8 sequences replaced by U+FFFD.
std::size_t append_string(std::string& out, std::string_view s);

/// Appends a number: integers without a fraction ("3"), others in the shortest form that reads
/// back to the same double ("0.25", "1e-07"); NaN and infinities as null (JSON has none).
void append_number(std::string& out, double value);
void append_int(std::string& out, int64_t value);
void append_uint(std::string& out, uint64_t value);

/// Appends a document id as given: `text` unquoted when it was a JSON number, else a string.
void append_id(std::string& out, std::string_view text, bool is_number);

/// Builds one JSON value into a caller-owned string, handling commas. Keys and values must
/// alternate inside objects; the writer does not check nesting (it is for trusted code).
///
///   json::writer w(line);
///   w.begin_object().key("id").value(7).key("ok").value(true).end_object();
class writer {
 public:
  explicit writer(std::string& out) : out_(out) {}

  writer& begin_object();
  writer& end_object();
  writer& begin_array();
  writer& end_array();
  writer& key(std::string_view name);
  writer& value(std::string_view s);
  writer& value(const char* s) { return value(std::string_view(s)); }
  writer& value(const std::string& s) { return value(std::string_view(s)); }
  writer& value(bool b);
  writer& value(double d);
  writer& value(int64_t v);
  writer& value(uint64_t v);
  writer& value(int v) { return value(static_cast<int64_t>(v)); }
  writer& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  writer& null();
  /// Inserts already-serialised JSON (trusted) as one value.
  writer& raw(std::string_view json);
  /// A document id as given (see append_id).
  writer& id(std::string_view text, bool is_number);

 private:
  void separate();

  std::string& out_;
  std::vector<bool> first_;  ///< per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace simdup::json
