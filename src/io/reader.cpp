#include <simdup/reader.hpp>

#include "io/byte_source.hpp"
#include "io/format_reader.hpp"
#include "io/line_input.hpp"
#include "io/parquet.hpp"

#include <simdup/utf8.hpp>

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

namespace simdup {
namespace {

/// Bytes of an input's start that decide whether it is text (git looks at 8,000).
constexpr std::size_t kTextCheckBytes = std::size_t{64} << 10;

/// Empty when `head` (the start of an input, decompressed) looks like text; otherwise why not:
/// a NUL byte (binaries, archives, UTF-16 and UTF-32 text, which the readers cannot read), or
/// more bytes in invalid UTF-8 sequences than in valid text. Text in a legacy 8-bit encoding
/// (Latin-1) is mostly ASCII and passes; its few invalid bytes are repaired as usual.
std::string generic_not_text_reason(std::string_view head) {
  if (const std::size_t nul = head.find('\0'); nul != std::string_view::npos) {
    return "not text: a NUL byte at offset " + std::to_string(nul) +
           " (a binary file, or UTF-16/UTF-32 text; inputs must be UTF-8)";
  }
  std::size_t invalid_bytes = 0;
  const char* p = head.data();
  const char* end = p + head.size();
  while (p < end) {
    const char* start = p;
    std::size_t invalid = 0;
    utf8::decode(p, end, invalid);
    if (invalid != 0) invalid_bytes += static_cast<std::size_t>(p - start);
  }
  if (invalid_bytes * 2 <= head.size()) return {};
  return "not text: " + std::to_string(invalid_bytes) + " of its first " +
         std::to_string(head.size()) + " bytes are not valid UTF-8 (inputs must be UTF-8)";
}

/// As generic_not_text_reason, naming the formats users hand over by mistake, with what to do
/// instead (only for inputs that are not text anyway: a text may start with "PAR1").
std::string not_text_reason(std::string_view head) {
  std::string reason = generic_not_text_reason(head);
  if (reason.empty()) return reason;
  struct known_format {
    std::string_view magic;
    const char* what;
  };
  static const known_format kKnown[] = {
      {std::string_view("\xfd\x37zXZ\0", 6),
       "xz-compressed (decompress it: xz -dc FILE | simdup ... -)"},
      {"BZh", "bzip2-compressed (decompress it: bzip2 -dc FILE | simdup ... -)"},
      {"\x04\x22\x4d\x18", "lz4-compressed (decompress it: lz4 -dc FILE | simdup ... -)"},
      {"PK\x03\x04", "a zip archive (extract it first)"},
      {"PAR1", detail::parquet_supported()
                   ? "a Parquet file (name it .parquet, or pass --input-format parquet)"
                   : "a Parquet file, and this simdup was built without Parquet support "
                     "(see docs/install.md)"},
  };
  for (const known_format& f : kKnown) {
    if (head.starts_with(f.magic)) {
      return std::string("not text: ") + f.what + "; simdup reads UTF-8 text, gzip and zstd";
    }
  }
  return reason;
}

/// Up to kTextCheckBytes from the start of the file at `path`, decompressed; shorter when a
/// read fails (the reader meets that error itself, in its turn).
std::string head_of(const std::string& path) {
  std::string head;
  auto src = detail::open_source(path, path, nullptr);
  if (!src) return head;
  head.resize(kTextCheckBytes);
  std::size_t have = 0;
  while (have < head.size()) {
    auto got = (*src)->read(head.data() + have, head.size() - have);
    if (!got || *got == 0) break;
    have += *got;
  }
  head.resize(have);
  return head;
}

/// True when the file at `path` starts and ends with Parquet's magic "PAR1" (a text that merely
/// starts with it stays text).
bool has_parquet_magic(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[4] = {}, tail[4] = {};
  const bool ok = std::fread(head, 1, 4, f) == 4 && std::fseek(f, -4, SEEK_END) == 0 &&
                  std::fread(tail, 1, 4, f) == 4;
  std::fclose(f);
  return ok && std::string_view(head, 4) == "PAR1" && std::string_view(tail, 4) == "PAR1";
}

}  // namespace

const char* input_format_name(input_format format) noexcept {
  switch (format) {
    case input_format::auto_detect:
      return "auto";
    case input_format::jsonl:
      return "jsonl";
    case input_format::tsv:
      return "tsv";
    case input_format::csv:
      return "csv";
    case input_format::text:
      return "text";
    case input_format::warc:
      return "warc";
    case input_format::parquet:
      return "parquet";
  }
  return "unknown";
}

namespace {

bool looks_like_html(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  if (i >= text.size() || text[i] != '<') return false;
  ++i;
  for (std::string_view tag : {"!doctype", "html", "head", "body", "div", "article", "p"}) {
    if (text.size() - i < tag.size() + 1) continue;
    bool same = true;
    for (std::size_t j = 0; j < tag.size() && same; ++j) {
      same = (text[i + j] | 0x20) == tag[j] || text[i + j] == tag[j];
    }
    const char next = text[i + tag.size()];
    if (same && !std::isalnum(static_cast<unsigned char>(next))) return true;
  }
  return false;
}

}  // namespace

// A text that opens with a document-level HTML tag is an HTML page (a crawl stored as JSONL):
// its tags and scripts must not count as content, or a page and its plain-text repost differ.
bool document_is_html(const document& doc) noexcept {
  return doc.text_is_html || looks_like_html(doc.text);
}

std::string document::location() const {
  return source + ":" + std::to_string(line != 0 ? line : offset);
}

result<input_format> parse_input_format(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, input_format>, 11> kNames{{
      {"auto", input_format::auto_detect},
      {"jsonl", input_format::jsonl},
      {"ndjson", input_format::jsonl},
      {"json", input_format::jsonl},
      {"tsv", input_format::tsv},
      {"csv", input_format::csv},
      {"text", input_format::text},
      {"txt", input_format::text},
      {"warc", input_format::warc},
      {"wet", input_format::warc},
      {"parquet", input_format::parquet},
  }};
  for (const auto& [n, f] : kNames) {
    if (n == name) return f;
  }
  return make_error(errc::invalid_argument,
                    "unknown input format '" + std::string(name) +
                        "' (expected auto, jsonl, tsv, csv, text, warc, wet or parquet)");
}

bool starts_compressed(std::string_view head) noexcept {
  return detail::starts_compressed(head);
}

input_format format_from_extension(std::string_view path) noexcept {
  const auto strip = [&](std::string_view ext) {
    if (path.size() > ext.size() && path.ends_with(ext)) {
      path.remove_suffix(ext.size());
      return true;
    }
    return false;
  };
  if (!strip(".gz")) {
    if (!strip(".zst")) strip(".zstd");
  }
  const std::size_t dot = path.rfind('.');
  const std::size_t slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return input_format::auto_detect;
  }
  const std::string_view ext = path.substr(dot + 1);
  if (ext == "jsonl" || ext == "json" || ext == "ndjson") return input_format::jsonl;
  if (ext == "tsv") return input_format::tsv;
  if (ext == "csv") return input_format::csv;
  if (ext == "txt") return input_format::text;
  if (ext == "warc" || ext == "wet") return input_format::warc;
  if (ext == "parquet") return input_format::parquet;
  return input_format::auto_detect;
}

result<std::vector<std::string>> expand_inputs(std::span<const std::string> inputs,
                                               bool keep_missing) {
  std::vector<std::string> out;
  if (inputs.empty()) {
    out.emplace_back("-");
    return out;
  }
  for (const std::string& in : inputs) {
    struct stat st {};
    if (in == "-" || ::stat(in.c_str(), &st) == 0) {
      out.push_back(in);
      continue;
    }
    if (in.find_first_of("*?[") == std::string::npos) {
      if (keep_missing) {
        out.push_back(in);
        continue;
      }
      return make_error(errc::not_found, "input not found: " + in);
    }
    glob_t g{};
    const int rc = ::glob(in.c_str(), 0, nullptr, &g);
    if (rc != 0) {
      ::globfree(&g);
      if (keep_missing) {
        out.push_back(in);
        continue;
      }
      return make_error(errc::not_found, "no input matches the pattern " + in);
    }
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
  }
  return out;
}

namespace detail {

void clear_fields(document& doc) {
  doc.id.clear();
  doc.id_is_number = false;
  doc.id_generated = false;
  doc.text.clear();
  doc.text_is_html = false;
  doc.url.clear();
  doc.title.clear();
  doc.time.reset();
  doc.features.reset();
  doc.invalid_utf8 = 0;
  doc.needs_decoding = false;
}

void set_provenance(document& doc, const input_context& ctx, input_format format, uint64_t line,
                    uint64_t offset) {
  doc.raw.clear();
  doc.format = format;
  if (doc.source != ctx.source) doc.source = ctx.source;
  doc.line = line;
  doc.offset = offset;
}

void reset_document(document& doc, const input_context& ctx, input_format format, uint64_t line,
                    uint64_t offset) {
  clear_fields(doc);
  set_provenance(doc, ctx, format, line, offset);
}

void generate_id(document& doc) {
  doc.id = doc.location();
  doc.id_is_number = false;
  doc.id_generated = true;
}

read_status line_failure(line_status st, const input_context& ctx, error_info& error) {
  switch (st) {
    case line_status::end:
      return read_status::end;
    case line_status::error:
      return read_status::failed;
    case line_status::too_long:
      error =
          make_error(errc::too_large, ctx.source + ":" + std::to_string(ctx.in->line_number()) +
                                          ": record larger than " +
                                          std::to_string(ctx.options->max_record_bytes) + " bytes");
      return read_status::bad_record;
    case line_status::ok:
      break;
  }
  return read_status::failed;
}

error_info record_error(const document& doc, errc code, std::string_view what) {
  return make_error(code, doc.location() + ": " + std::string(what));
}

bool is_blank(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; });
}

}  // namespace detail

struct reader::impl {
  reader_options options;
  std::vector<std::string> inputs;
  std::string memory;  ///< from_memory: the buffer, moved into the source when opened
  bool from_memory = false;
  detail::parquet_slice slice;  ///< parquet_rows: the rows to read
  uint64_t lines_before = 0;    ///< from_memory: lines of the source before the buffer
  std::size_t next_input = 0;
  std::unique_ptr<detail::line_input> in;
  std::unique_ptr<detail::format_reader> parser;
  reader_stats stats;
  uint64_t finished_bytes = 0;  ///< decompressed bytes of inputs already closed
  uint64_t parquet_bytes = 0;   ///< the size of the Parquet file being read
  bool failed = false;
  error_info failure;
  std::string skip_reason;  ///< of the last bad_record
  bool skip_was_input = false;

  /// Opens inputs[next_input]; false (with `error`) when that fails.
  bool open_next(error_info& error) {
    const std::string& path = inputs[next_input++];
    const std::string name = path == "-" ? "stdin" : path;
    input_format fmt = options.format;
    if (fmt == input_format::auto_detect) fmt = format_from_extension(path);
    struct stat input_stat {};
    if (fmt == input_format::auto_detect && !from_memory && path != "-" &&
        ::stat(path.c_str(), &input_stat) == 0 && S_ISREG(input_stat.st_mode) &&
        has_parquet_magic(path)) {
      fmt = input_format::parquet;  // an unnamed Parquet file: its magic, not its extension
    }
    if (fmt == input_format::parquet) return open_parquet(path, name, error);
    auto src = from_memory
                   ? detail::open_memory_source(std::move(memory), name, &stats.compressed_bytes)
                   : detail::open_source(path, name, &stats.compressed_bytes, options.cancel);
    if (!src) {
      error = std::move(src).error();
      // A pattern kept by expand_inputs(keep_missing) matched nothing: say so, not ENOENT.
      if (error.code == errc::not_found && path.find_first_of("*?[") != std::string::npos) {
        error.message = "no input matches the pattern " + path;
      }
      return false;
    }
    in = std::make_unique<detail::line_input>(std::move(*src), options.max_record_bytes);
    in->number_after(lines_before);
    ++stats.inputs_opened;
    if (fmt == input_format::auto_detect) {
      auto head = in->peek(64);
      if (!head) {
        error = std::move(head).error();
        return false;
      }
      fmt = sniff(*head);
    }
    // A file whose start is not text would be read as garbage records; WARC payloads may be
    // binary. Only regular files are checked, through a second open, so the stream read here
    // is untouched (a truncation further on is still met after the records before it) and
    // pipes (stdin, <(zcat ...)) lose nothing.
    struct stat st {};
    if (fmt != input_format::warc && !from_memory && path != "-" &&
        ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      const std::string head = head_of(path);
      if (std::string reason = not_text_reason(head); !reason.empty()) {
        in.reset();  // the message names the input, not a line in it
        error = make_error(errc::unsupported, name + ": " + reason);
        return false;
      }
    }
    const detail::input_context ctx{in.get(), name, &options, inputs.size() > 1};
    switch (fmt) {
      case input_format::jsonl:
        parser = detail::make_jsonl_reader(ctx);
        break;
      case input_format::tsv:
        parser = detail::make_tsv_reader(ctx);
        break;
      case input_format::csv:
        parser = detail::make_csv_reader(ctx);
        break;
      case input_format::warc:
        parser = detail::make_warc_reader(ctx);
        break;
      case input_format::text:
      case input_format::auto_detect:
      case input_format::parquet:  // opened above
        parser = detail::make_text_reader(ctx);
        break;
    }
    return true;
  }

  /// A Parquet input: DuckDB reads the file itself (its footer first), so it must be a file.
  bool open_parquet(const std::string& path, const std::string& name, error_info& error) {
    if (from_memory || path == "-") {
      error = detail::parquet_supported()
                  ? make_error(errc::unsupported,
                               name +
                                   ": Parquet is read from files only (not from stdin or "
                                   "memory): save it to a file and pass its name")
                  : detail::parquet_unsupported(name);
      return false;
    }
    ++stats.inputs_opened;
    const detail::input_context ctx{nullptr, name, &options, inputs.size() > 1};
    auto p = detail::make_parquet_reader(ctx, path, slice);
    if (!p) {
      error = std::move(p).error();
      return false;
    }
    parser = std::move(p).value();
    struct stat st {};
    parquet_bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    return true;
  }

  /// Content sniffing for inputs without a known extension (stdin): a JSON object, a WARC
  /// version line, or else plain text.
  static input_format sniff(std::string_view head) {
    const std::size_t start = head.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) return input_format::text;
    head.remove_prefix(start);
    if (head.front() == '{') return input_format::jsonl;
    if (head.starts_with("WARC/")) return input_format::warc;
    return input_format::text;
  }

  void close_current() {
    if (in) finished_bytes += in->position();
    // A Parquet file counts whole when it is done (its compressed pages are not a byte stream).
    finished_bytes += std::exchange(parquet_bytes, 0);
    parser.reset();
    in.reset();
  }

  read_status next(document& doc, error_info& error) {
    if (failed) {
      error = failure;
      return read_status::failed;
    }
    for (;;) {
      if (!parser) {
        if (next_input >= inputs.size()) return read_status::end;
        if (!open_next(error)) return input_failed(doc, error);
      }
      const read_status st = parser->next(doc, error);
      stats.bytes = finished_bytes + (in ? in->position() : 0);
      switch (st) {
        case read_status::record:
          ++stats.records;
          return st;
        case read_status::bad_record:
          ++stats.bad_records;
          skip_reason = errc_name(error.code);
          skip_was_input = false;
          return st;
        case read_status::failed:
          return input_failed(doc, error);
        case read_status::end:
          close_current();
          stats.bytes = finished_bytes;
          break;
      }
    }
  }

  /// The current input (inputs[next_input - 1]) failed: a bad record naming it when
  /// skip_failed_inputs (then on to the next input), else fatal.
  read_status input_failed(document& doc, error_info& error) {
    const std::string& path = inputs[next_input - 1];
    skip_reason = detail::input_failure_reason(error);  // before the message gets its prefix
    doc.source = path == "-" ? "stdin" : path;
    doc.line = 0;
    doc.offset = 0;
    if (in) {
      // The line after the last complete one is where the input broke off.
      doc.line = in->line_number() + 1;
      doc.offset = in->position();
      error.message = doc.source + ":" + std::to_string(doc.line) + ": " + error.message +
                      " (decompressed byte offset " + std::to_string(doc.offset) + "; the " +
                      std::to_string(doc.line - 1) + " lines before it were read)";
    }
    const bool interrupted = options.cancel && options.cancel->load(std::memory_order_relaxed);
    if (!options.skip_failed_inputs || interrupted) return fail(error);
    doc.id.clear();
    doc.raw.clear();
    doc.text.clear();
    ++stats.bad_records;
    skip_was_input = true;
    close_current();
    return read_status::bad_record;
  }

  read_status fail(const error_info& error) {
    failed = true;
    failure = error;
    return read_status::failed;
  }
};

reader::reader(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
reader::reader(reader&&) noexcept = default;
reader& reader::operator=(reader&&) noexcept = default;
reader::~reader() = default;

result<reader> reader::open(std::span<const std::string> inputs, const reader_options& options) {
  auto expanded = expand_inputs(inputs, options.skip_failed_inputs);
  if (!expanded) return std::move(expanded).error();
  auto p = std::make_unique<impl>();
  p->options = options;
  p->inputs = std::move(*expanded);
  return reader(std::move(p));
}

reader reader::from_memory(std::string name, std::string data, const reader_options& options,
                           uint64_t lines_before) {
  auto p = std::make_unique<impl>();
  p->lines_before = lines_before;
  p->options = options;
  p->inputs = {std::move(name)};
  p->memory = std::move(data);
  p->from_memory = true;
  return reader(std::move(p));
}

result<reader> reader::parquet_rows(std::string path, uint64_t first_row, uint64_t rows,
                                    const reader_options& options) {
  auto p = std::make_unique<impl>();
  p->options = options;
  p->options.format = input_format::parquet;
  p->inputs = {std::move(path)};
  p->slice = {first_row, rows};
  return reader(std::move(p));
}

result<std::vector<parquet_row_group>> parquet_row_groups(const std::string& path) {
  return detail::parquet_row_groups(path);
}

read_status reader::next(document& doc, error_info& error) {
  return impl_->next(doc, error);
}

read_status decode_record(document& doc, const field_names& fields, error_info& error) {
  if (!doc.needs_decoding) return read_status::record;
  return detail::decode_jsonl(doc, fields, error);
}

std::size_t decode_records(std::span<document> docs, const field_names& fields,
                           const std::function<bool(std::size_t, error_info&)>& on_bad) {
  std::size_t kept = 0;
  error_info error;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (decode_record(docs[i], fields, error) == read_status::record) {
      if (kept != i) std::swap(docs[kept], docs[i]);
      ++kept;
    } else if (!on_bad(i, error)) {
      break;
    }
  }
  return kept;
}

std::string_view reader::header() const noexcept {
  return impl_->parser ? impl_->parser->header() : std::string_view{};
}

std::string_view reader::last_skip_reason() const noexcept {
  return impl_->skip_reason;
}

bool reader::last_skip_was_input() const noexcept {
  return impl_->skip_was_input;
}

const reader_stats& reader::stats() const noexcept {
  return impl_->stats;
}

const std::vector<std::string>& reader::inputs() const noexcept {
  return impl_->inputs;
}

}  // namespace simdup
