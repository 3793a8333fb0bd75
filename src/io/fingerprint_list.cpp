// Fingerprint lists (include/simdup/fingerprint_list.hpp): JSONL/TSV written by a fingerprint
// run, plain hex or decimal lines, or little-endian uint64.
#include <simdup/fingerprint_list.hpp>
#include <simdup/reader.hpp>
#include <simdup/simhash.hpp>

#include <simdjson.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_source.hpp"
#include "io/format_reader.hpp"
#include "io/line_input.hpp"

namespace simdup {
namespace {

/// "16 hex digits" or a decimal uint64; only decimal when `decimal` (a 16-digit decimal number
/// such as 1000000000000000 is otherwise read as hex).
bool parse_plain(std::string_view s, uint64_t& out, bool decimal) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.size() == 16 && !decimal) {
    if (auto h = parse_hex(s)) {
      out = *h;
      return true;
    }
  }
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

enum class text_format { unknown, jsonl, tsv, plain };

/// Reads one text input into `list`. Errors are "NAME:LINE: reason"; with `skip`, malformed
/// lines are counted and reported in `list` instead, and reading goes on.
status read_fingerprint_text(const std::string& path, fingerprint_list& list, bool decimal,
                             bool skip) {
  const std::string name = path == "-" ? "<stdin>" : path;
  auto src = detail::open_source(path, name, nullptr);
  if (!src) return std::move(src).error();
  detail::line_input in(std::move(*src), std::size_t{64} << 20);
  simdjson::ondemand::parser parser;
  text_format format = text_format::unknown;
  std::string_view line;
  std::string id;  // a TSV id, unescaped
  error_info err;
  auto add = [&](uint64_t fp) {
    list.fingerprints.push_back(fp);
    list.id_end.push_back(list.ids.size());
  };
  // One non-blank line: empty when it was taken (or skipped by its status), else what is
  // wrong with it.
  auto parse_line = [&]() -> std::string {
    const auto bad = [](std::string why) { return why; };
    if (format == text_format::unknown) {
      const std::size_t first = line.find_first_not_of(" \t");
      format = line[first] == '{'                          ? text_format::jsonl
               : line.find('\t') != std::string_view::npos ? text_format::tsv
                                                           : text_format::plain;
    }
    if (format == text_format::plain) {
      uint64_t fp;
      if (!parse_plain(line, fp, decimal))
        return bad(decimal ? "expected a decimal fingerprint"
                           : "expected a fingerprint (16 hex digits or a decimal number)");
      json::append_uint(list.ids, in.line_number());
      add(fp);
      return {};
    }
    if (format == text_format::tsv) {
      // id<TAB>hex, or id<TAB><TAB>status for documents without a fingerprint.
      const std::size_t tab = line.find('\t');
      if (tab == std::string_view::npos) return bad("expected id<TAB>fingerprint");
      std::string_view rest = line.substr(tab + 1);
      if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
      const std::size_t tab2 = rest.find('\t');
      if (tab2 != std::string_view::npos) {
        if (rest.substr(tab2 + 1) != "ok") return {};  // a status column: not ok, no fingerprint
        rest = rest.substr(0, tab2);
      }
      auto fp = parse_hex(rest);
      if (!fp) return bad("expected 16 hex digits after the tab");
      detail::tsv_unescape(line.substr(0, tab), id);
      json::append_string(list.ids, id);
      add(*fp);
      return {};
    }
    // JSONL: {"id": ..., "fingerprint": "hex" | null, "status": "..."}
    namespace od = simdjson::ondemand;
    auto doc = parser.iterate(line.data(), line.size(), line.size() + detail::kLinePadding);
    od::object obj;
    if (doc.error() || doc.get_object().get(obj)) return bad("invalid JSON (expected an object)");
    std::string id_json;
    std::string_view hex;
    bool have_fp = false, skip_record = false;
    for (auto field : obj) {
      std::string_view key;
      od::value value;
      if (field.unescaped_key().get(key) || field.value().get(value)) return bad("invalid JSON");
      od::json_type type;
      if (value.type().get(type)) return bad("invalid JSON");
      if (key == "id") {
        if (type == od::json_type::string) {
          std::string_view s;
          if (value.get_string().get(s)) return bad("invalid JSON string in id");
          id_json.clear();
          json::append_string(id_json, s);
        } else if (type == od::json_type::number) {
          std::string_view raw = value.raw_json_token();
          while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
          id_json.assign(raw);
        } else if (type != od::json_type::null) {
          return bad("id must be a string or a number");
        }
      } else if (key == "fingerprint") {
        if (type == od::json_type::null) {
          skip_record = true;
        } else if (type != od::json_type::string || value.get_string().get(hex)) {
          return bad("fingerprint must be a string of 16 hex digits or null");
        } else {
          have_fp = true;
          // The view points into the parser's buffer, valid until the next iterate().
          if (!parse_hex(hex)) return bad("fingerprint must be 16 hex digits");
        }
      } else if (key == "status") {
        std::string_view s;
        if (type != od::json_type::string || value.get_string().get(s))
          return bad("status must be a string");
        if (s != "ok") skip_record = true;
      }
    }
    if (!doc.current_location().error()) return bad("unexpected content after the JSON object");
    if (skip_record) return {};
    if (!have_fp) return bad("missing \"fingerprint\"");
    if (id_json.empty()) json::append_uint(id_json, in.line_number());
    list.ids += id_json;
    add(*parse_hex(hex));
    return {};
  };
  while (true) {
    const auto st = in.next_line(line, err);
    if (st == detail::line_status::end) break;
    if (st == detail::line_status::error) return err;
    std::string why = st == detail::line_status::too_long ? "line longer than 64 MiB"
                      : detail::is_blank(line)            ? std::string()
                                                          : parse_line();
    if (why.empty()) continue;
    std::string message = name + ":" + std::to_string(in.line_number()) + ": " + why;
    if (!skip) return make_error(errc::invalid_input, std::move(message));
    ++list.skipped_lines;
    if (list.skip_messages.size() < 20) list.skip_messages.push_back(std::move(message));
  }
  return {};
}

/// Reads a binary file of little-endian uint64 ("-" = stdin).
status read_fingerprint_binary(const std::string& path, fingerprint_list& list) {
  const std::string name = path == "-" ? "<stdin>" : path;
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return make_error(errc::not_found, name + ": " + std::strerror(errno));
  std::vector<char> buf(std::size_t{1} << 20);
  std::size_t carry = 0;  // bytes of an incomplete uint64 kept from the last read
  while (true) {
    const std::size_t got = std::fread(buf.data() + carry, 1, buf.size() - carry, f);
    if (got == 0) break;
    const std::size_t have = carry + got;
    const std::size_t whole = have / 8;
    const std::size_t old = list.fingerprints.size();
    list.fingerprints.resize(old + whole);
    std::memcpy(list.fingerprints.data() + old, buf.data(), whole * 8);
    if constexpr (std::endian::native == std::endian::big)
      for (std::size_t i = old; i < old + whole; ++i)
        list.fingerprints[i] = __builtin_bswap64(list.fingerprints[i]);
    carry = have - whole * 8;
    std::memmove(buf.data(), buf.data() + whole * 8, carry);
  }
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) return make_error(errc::io_error, name + ": read error");
  if (carry)
    return make_error(errc::invalid_input,
                      name + ": size is not a multiple of 8 bytes (little-endian uint64 values)");
  return {};
}

}  // namespace

result<fingerprint_list> read_fingerprint_list(std::span<const std::string> inputs,
                                               const fingerprint_list_options& options) {
  const bool skip = options.skip_bad;
  fingerprint_list list;
  auto paths = expand_inputs(inputs, skip);
  if (!paths) return std::move(paths).error();
  // With several binary files, positions continue across files, so ids stay unique.
  for (const auto& p : *paths) {
    status s = options.binary ? read_fingerprint_binary(p, list)
                              : read_fingerprint_text(p, list, options.decimal, skip);
    if (s) continue;
    if (!skip) return s.error();
    // The input could not be read (to its end): what it gave so far stays, the rest is skipped.
    ++list.skipped_inputs;
    if (list.skip_messages.size() < 20) list.skip_messages.push_back(s.error().message);
  }
  return list;
}

}  // namespace simdup
