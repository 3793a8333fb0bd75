#include "dedup/job_parts.hpp"

#include <simdup/json.hpp>
#include <simdup/reader.hpp>

#include <cmath>

namespace simdup::detail {
namespace {

// The report shows this much of each text.
constexpr std::size_t kSampleBytes = 4000;

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
    default:
      return "jsonl";
  }
}

constexpr std::string_view kAnnotationColumns[] = {"keep",     "cluster", "duplicate_of",
                                                   "distance", "layer",   "jaccard"};

// duplicates.jsonl rounds the Jaccard to 4 digits; the annotations say the same.
double rounded(float jaccard) {
  return std::round(static_cast<double>(jaccard) * 1e4) / 1e4;
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
status annotate(std::string& out, const document& doc, const annotation& note) {
  const dedup_decision& d = note.decision;
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
    w.key("simdup").begin_object().key("keep").value(note.kept);
    w.key("cluster").value(static_cast<uint64_t>(d.representative));
    w.key("duplicate_of");
    if (note.kept) {
      w.null();
    } else {
      w.id(note.rep_id, note.rep_is_number);
    }
    w.key("distance");
    if (!note.kept && d.distance >= 0) {
      w.value(static_cast<int64_t>(d.distance));
    } else {
      w.null();
    }
    w.key("layer").value(layer_name(note.kept ? dedup_layer::none : d.layer));
    w.key("jaccard");
    if (!note.kept && !std::isnan(d.jaccard)) {
      w.value(rounded(d.jaccard));
    } else {
      w.null();
    }
    w.end_object();
    out.append(doc.raw, close, std::string::npos);
    return {};
  }
  if (doc.format != input_format::csv && doc.format != input_format::tsv) {
    return make_error(errc::invalid_argument, "annotate writes JSONL, CSV and TSV records; " +
                                                  doc.source + " is " +
                                                  input_format_name(doc.format));
  }
  const bool csv = doc.format == input_format::csv;
  std::string fields[6];
  fields[0] = note.kept ? "true" : "false";
  fields[1] = std::to_string(d.representative);
  if (!note.kept) {
    fields[2] = note.rep_id;
    if (d.distance >= 0) fields[3] = std::to_string(d.distance);
    if (!std::isnan(d.jaccard)) json::append_number(fields[5], rounded(d.jaccard));
  }
  fields[4] = layer_name(note.kept ? dedup_layer::none : d.layer);
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
                            const annotation* note) {
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
  return {};
}

std::vector<std::string> record_writer::names() const {
  return names_;
}

void append_duplicate_line(std::string& out, std::string_view id, bool id_is_number,
                           std::string_view rep_id, bool rep_is_number,
                           const dedup_decision& decision) {
  json::writer w(out);
  w.begin_object().key("id").id(id, id_is_number);
  w.key("duplicate_of").id(rep_id, rep_is_number);
  w.key("cluster").value(static_cast<uint64_t>(decision.representative));
  w.key("distance");
  if (decision.distance >= 0) {
    w.value(static_cast<int64_t>(decision.distance));
  } else {
    w.null();
  }
  w.key("layer").value(layer_name(decision.layer));
  if (!std::isnan(decision.jaccard)) {
    // Rounded so the file stays short; 4 digits are plenty against a threshold.
    w.key("jaccard").value(std::round(static_cast<double>(decision.jaccard) * 1e4) / 1e4);
  }
  w.end_object();
  out.push_back('\n');
}

sample_collector::sample_collector(std::vector<cluster> clusters) : clusters_(std::move(clusters)) {
  for (const auto& c : clusters_) {
    wanted_[c.representative];
    for (uint32_t m : c.members) wanted_[m];
  }
}

std::optional<uint32_t> sample_collector::last() const {
  std::optional<uint32_t> last;
  for (const auto& [ordinal, text] : wanted_) last = std::max(last.value_or(0), ordinal);
  return last;
}

void sample_collector::take(uint32_t ordinal, const document& doc) {
  auto it = wanted_.find(ordinal);
  if (it == wanted_.end()) return;
  it->second.first = doc.id;
  std::string_view text = doc.text;
  if (text.size() > kSampleBytes) {
    // Cut at a code point boundary.
    std::size_t cut = kSampleBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    it->second.second = std::string(text.substr(0, cut)) + " …";
  } else {
    it->second.second = std::string(text);
  }
}

std::vector<cluster_sample> sample_collector::build(
    const std::function<dedup_decision(uint32_t)>& decision_of) const {
  std::vector<cluster_sample> out;
  for (const auto& c : clusters_) {
    cluster_sample s;
    s.cluster = c.representative;
    s.size = c.size;
    const auto& rep = wanted_.at(c.representative);
    s.representative = {rep.first, rep.second, dedup_layer::none, -1, NAN};
    for (uint32_t m : c.members) {
      const auto& doc = wanted_.at(m);
      const dedup_decision d = decision_of(m);
      s.members.push_back(
          {doc.first, doc.second, d.layer, d.distance, static_cast<double>(d.jaccard)});
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace simdup::detail
