#include "dedup/record_writer.hpp"

#include <simdup/dedup_job.hpp>
#include <simdup/json.hpp>
#include <simdup/reader.hpp>

#include <cmath>

namespace simdup::detail {
namespace {

const char* extension(input_format format) {
  switch (format) {
    case input_format::tsv:
      return "tsv";
    case input_format::csv:
      return "csv";
    case input_format::text:
      return "txt";
    case input_format::warc:
      return "warc";
    case input_format::parquet:
      return "parquet";
    default:
      return "jsonl";
  }
}

constexpr std::string_view kAnnotationColumns[] = {"keep",     "cluster", "duplicate_of",
                                                   "distance", "layer",   "jaccard"};

// duplicates.jsonl rounds the Jaccard to 4 digits (short lines; plenty against a threshold);
// the annotations say the same.
double rounded(double jaccard) {
  return std::round(jaccard * 1e4) / 1e4;
}

void append_csv_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

// The record with its decision, in its own format.
status annotate(std::string& out, const document& doc, const record_annotation& note) {
  out.clear();
  if (doc.format == input_format::jsonl) {
    const std::size_t close = doc.raw.rfind('}');
    if (close == std::string::npos) {
      return make_error(errc::invalid_input, doc.source + ": record is not a JSON object");
    }
    out.append(doc.raw, 0, close);
    const std::size_t last = out.find_last_not_of(" \t\r\n");
    if (last != std::string::npos && out[last] != '{') out.push_back(',');
    json::writer w(out);
    w.key("simdup").begin_object().key("keep").value(note.keep);
    w.key("cluster").value(note.cluster);
    w.key("duplicate_of");
    if (note.keep) {
      w.null();
    } else {
      w.id(note.duplicate_of, note.duplicate_of_is_number);
    }
    w.key("distance");
    if (!note.keep && note.distance >= 0) {
      w.value(static_cast<int64_t>(note.distance));
    } else {
      w.null();
    }
    w.key("layer").value(layer_name(note.keep ? dedup_layer::none : note.layer));
    w.key("jaccard");
    if (!note.keep && !std::isnan(note.jaccard)) {
      w.value(rounded(note.jaccard));
    } else {
      w.null();
    }
    w.end_object();
    out.append(doc.raw, close, std::string::npos);
    return {};
  }
  if (doc.format != input_format::csv && doc.format != input_format::tsv) {
    return invalid_parameter({.name = "annotate",
                              .value = doc.source,
                              .allowed = "JSONL, CSV, TSV and Parquet records",
                              .reason = "writes JSONL, CSV, TSV and Parquet records; " +
                                        doc.source + " is " + input_format_name(doc.format)});
  }
  const bool csv = doc.format == input_format::csv;
  std::string fields[6];
  fields[0] = note.keep ? "true" : "false";
  fields[1] = std::to_string(note.cluster);
  if (!note.keep) {
    fields[2] = note.duplicate_of;
    if (note.distance >= 0) fields[3] = std::to_string(note.distance);
    if (!std::isnan(note.jaccard)) json::append_number(fields[5], rounded(note.jaccard));
  }
  fields[4] = layer_name(note.keep ? dedup_layer::none : note.layer);
  if (csv) out.append(doc.raw);
  for (const std::string& f : fields) {
    if (csv) {
      out.push_back(',');
      append_csv_field(out, f);
    } else {
      append_tsv_escaped(out, f);
      out.push_back('\t');
    }
  }
  if (!csv) out.append(doc.raw);
  return {};
}

}  // namespace

status record_writer::write(const document& doc, std::string_view csv_header,
                            const record_annotation* note) {
  if (doc.format == input_format::parquet) {
    if (!parquet_) {
      parquet_.emplace(note != nullptr);
      if (first_.empty()) first_ = input_format_name(doc.format);
      names_.push_back(stem_ + ".parquet");
    }
    std::optional<parquet_note> n;
    if (note) {
      n = parquet_note{.keep = note->keep,
                       .cluster = note->cluster,
                       .duplicate_of = note->keep ? std::string_view() : note->duplicate_of,
                       .distance = note->keep ? -1 : note->distance,
                       .layer = layer_name(note->keep ? dedup_layer::none : note->layer),
                       .jaccard = note->keep ? std::nan("") : rounded(note->jaccard)};
    }
    parquet_->add(doc.source, doc.line - 1, n ? &*n : nullptr);
    return {};
  }
  std::string_view record = doc.raw;
  if (note) {
    if (auto st = annotate(line_, doc, *note); !st) return st;
    record = line_;
  }
  auto it = sinks_.find(doc.format);
  if (it == sinks_.end()) {
    std::string name = stem_ + "." + extension(doc.format) + (zstd_ ? ".zst" : "");
    auto sink = file_sink::open(dir_ / name, zstd_);
    if (!sink) return std::move(sink).error();
    it = sinks_.emplace(doc.format, std::move(sink).value()).first;
    if (first_.empty()) first_ = input_format_name(doc.format);
    names_.push_back(std::move(name));
    if (doc.format == input_format::csv && !csv_header.empty()) {
      if (auto st = it->second.write(csv_header); !st) return st;
      if (note) {
        std::string extra;
        for (std::string_view c : kAnnotationColumns) extra.append(",simdup_").append(c);
        if (auto st = it->second.write(extra); !st) return st;
      }
      if (auto st = it->second.write("\n"); !st) return st;
    }
  }
  if (auto st = it->second.write(record); !st) return st;
  return it->second.write(doc.format == input_format::warc ? "\r\n\r\n" : "\n");
}

status record_writer::close() {
  for (auto& [format, sink] : sinks_) {
    if (auto st = sink.close(); !st) return st;
  }
  if (parquet_) {
    if (auto st = parquet_->write(dir_ / (stem_ + ".parquet")); !st) return st;
    parquet_.reset();
  }
  return {};
}

status record_writer::write_empty(input_format format, const std::string& schema_from) {
  if (format == input_format::parquet) {
    return parquet_rows(false).write(dir_ / (stem_ + ".parquet"), schema_from);
  }
  const char* ext = format == input_format::auto_detect ? "jsonl" : extension(format);
  auto empty = file_sink::open(dir_ / (stem_ + "." + ext + (zstd_ ? ".zst" : "")), zstd_);
  if (!empty) return std::move(empty).error();
  return empty->close();
}

std::vector<std::string> record_writer::names() const {
  return names_;
}

void append_duplicate_line(std::string& out, std::string_view id, bool id_is_number,
                           std::string_view rep_id, bool rep_is_number,
                           const dedup_decision& decision, std::string_view against) {
  json::writer w(out);
  w.begin_object().key("id").id(id, id_is_number);
  w.key("duplicate_of").id(rep_id, rep_is_number);
  if (decision.against != 0) {
    w.key("cluster").null().key("against").value(against);
  } else {
    w.key("cluster").value(static_cast<uint64_t>(decision.representative));
  }
  w.key("distance");
  if (decision.distance >= 0) {
    w.value(static_cast<int64_t>(decision.distance));
  } else {
    w.null();
  }
  w.key("layer").value(layer_name(decision.layer));
  if (!std::isnan(decision.jaccard)) {
    w.key("jaccard").value(rounded(decision.jaccard));
  }
  w.end_object();
  out.push_back('\n');
}

}  // namespace simdup::detail

namespace simdup {

namespace {

// The records of one part with their flags or notes (`count`, one per good record), through
// `write(doc, ordinal, writer)`, into DIR/STEM.<ext>[.zst]: the loop of write_kept_part and
// write_annotated_part.
template <class Write>
result<uint64_t> write_part(reader& in, std::size_t count, const std::string& dir,
                            const std::string& stem, bool zstd, input_format empty_format,
                            Write write) {
  detail::record_writer out(dir, zstd, stem);
  document doc;
  error_info err;
  uint64_t ordinal = 0, written = 0;
  for (;;) {
    const read_status rs = in.next(doc, err);
    if (rs == read_status::end) break;
    if (rs == read_status::bad_record) continue;
    if (rs == read_status::failed) return err;
    if (ordinal >= count) {
      return make_error(errc::io_error, "input changed during the run: more records");
    }
    auto wrote = write(doc, ordinal++, out);
    if (!wrote) return std::move(wrote).error();
    written += *wrote ? 1 : 0;
  }
  if (ordinal != count) {
    return make_error(errc::io_error, "input changed during the run: fewer records");
  }
  if (auto st = out.close(); !st) return std::move(st).error();
  if (out.names().empty()) {
    if (auto st = out.write_empty(empty_format); !st) return std::move(st).error();
  }
  return written;
}

}  // namespace

result<uint64_t> write_kept_part(reader& in, std::span<const uint8_t> keep, const std::string& dir,
                                 const std::string& stem, bool zstd, input_format empty_format) {
  return write_part(
      in, keep.size(), dir, stem, zstd, empty_format,
      [&](const document& doc, uint64_t ordinal, detail::record_writer& out) -> result<bool> {
        if (keep[ordinal] == 0) return false;
        if (auto st = out.write(doc, in.header()); !st) return std::move(st).error();
        return true;
      });
}

result<uint64_t> write_annotated_part(reader& in, std::span<const record_annotation> notes,
                                      const std::string& dir, const std::string& stem, bool zstd,
                                      input_format empty_format) {
  return write_part(
      in, notes.size(), dir, stem, zstd, empty_format,
      [&](const document& doc, uint64_t ordinal, detail::record_writer& out) -> result<bool> {
        const record_annotation& note = notes[ordinal];
        if (auto st = out.write(doc, in.header(), &note); !st) {
          return std::move(st).error();
        }
        return true;
      });
}

}  // namespace simdup
