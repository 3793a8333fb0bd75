// simdup.dask's steps over one partition's records: splitting files into partitions, signing a
// partition's records, re-signing the shingle arrays of chosen rows, writing its kept or
// annotated records, and the texts of the report's sample clusters.
#include "bindings.hpp"
#include "chunk_signer.hpp"
#include "dask_arrays.hpp"

#include <simdup/dedup.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/reader.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace simdup::python {
namespace {

// Bad-record messages a partition keeps (the rest are only counted), as the CLI's default.
constexpr std::size_t kMaxMessages = 20;

// Signatures of one partition's records, by column; without the verification shingle arrays
// (only their sizes), which dask_sketches signs anew for the documents that need them.
struct signed_part {
  std::vector<std::string> ids;
  std::vector<uint8_t> id_is_number;
  std::vector<uint64_t> fingerprint, url_key, title_key, content_key, band_keys;
  std::vector<uint8_t> has_fingerprint;
  std::vector<uint32_t> length, shingle_count;
  std::vector<int64_t> time;
  std::vector<double> field;
  uint64_t skipped = 0, skipped_inputs = 0, invalid_utf8 = 0, short_documents = 0, bytes = 0;
  std::map<std::string, uint64_t> skipped_reasons;
  std::vector<std::string> messages;
  std::string format;
};

result<signed_part> sign_all(reader& in, const dedup_settings& s) {
  signed_part out;
  auto signer = chunk_signer::create(s);
  if (!signer) return std::move(signer).error();
  const std::size_t bands = s.dedup.detection.minhash.bands;
  const auto skipped = [&](const error_info& err) {
    ++(in.last_skip_was_input() ? out.skipped_inputs : out.skipped);
    ++out.skipped_reasons[std::string(in.last_skip_reason())];
    if (out.messages.size() < kMaxMessages) out.messages.push_back(err.message);
  };
  for (;;) {
    auto signed_count = signer->next(in, skipped);
    if (!signed_count) return std::move(signed_count).error();
    if (*signed_count == 0) break;
    for (std::size_t i = 0; i < *signed_count; ++i) {
      const document& doc = signer->docs()[i];
      const doc_signature& sig = signer->signatures()[i];
      if (out.format.empty()) out.format = input_format_name(doc.format);
      out.ids.push_back(doc.id);
      out.id_is_number.push_back(doc.id_is_number);
      out.fingerprint.push_back(sig.fingerprint);
      out.has_fingerprint.push_back(sig.has_fingerprint);
      out.url_key.push_back(sig.url_key);
      out.title_key.push_back(sig.title_key);
      out.content_key.push_back(sig.content_key);
      out.length.push_back(sig.length);
      out.shingle_count.push_back(static_cast<uint32_t>(sig.shingles.size()));
      out.time.push_back(sig.time);
      out.field.push_back(sig.field);
      out.invalid_utf8 += sig.invalid_utf8;
      if (!sig.has_fingerprint) ++out.short_documents;
      if (bands > 0) {
        if (sig.band_keys.size() == bands) {
          out.band_keys.insert(out.band_keys.end(), sig.band_keys.begin(), sig.band_keys.end());
        } else {
          out.band_keys.insert(out.band_keys.end(), bands, 0);
        }
      }
    }
  }
  out.bytes = in.stats().bytes;
  return out;
}

using range_tuple = std::tuple<uint64_t, uint64_t, uint64_t>;

// Part of one file: of a JSONL or TSV file, bytes [begin, end) cut at line starts, after
// `lines_before` lines; of a Parquet file, rows [begin, end) (whole row groups).
struct file_range {
  uint64_t begin = 0, end = 0, lines_before = 0;
};

using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

result<std::string> read_range(const std::string& path, const file_range& r) {
  file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
  std::string out(r.end - r.begin, '\0');
  if (!f || ::fseeko(f.get(), static_cast<off_t>(r.begin), SEEK_SET) != 0 ||
      std::fread(out.data(), 1, out.size(), f.get()) != out.size()) {
    return make_error(errc::io_error, path + ": cannot read bytes " + std::to_string(r.begin) +
                                          " to " + std::to_string(r.end) +
                                          " (did it change during the run?)");
  }
  return out;
}

input_format format_of(const std::string& path, const reader_options& options) {
  return options.format == input_format::auto_detect ? format_from_extension(path) : options.format;
}

// The reader of one partition: records given as JSONL bytes (`data`), a range of inputs[0], or
// whole inputs. Call without the GIL.
result<reader> open_partition(const std::vector<std::string>& inputs,
                              std::optional<std::string> data, const std::string& source_name,
                              const std::optional<file_range>& range,
                              const reader_options& options) {
  if (data) return reader::from_memory(source_name, std::move(*data), options);
  if (!range) return reader::open(inputs, options);
  if (inputs.size() != 1) return make_error(errc::invalid_argument, "a byte range needs one input");
  if (format_of(inputs[0], options) == input_format::parquet)
    return reader::parquet_rows(inputs[0], range->begin, range->end - range->begin, options);
  auto bytes = read_range(inputs[0], *range);
  if (!bytes) return std::move(bytes).error();
  return reader::from_memory(inputs[0], std::move(bytes).value(), options, range->lines_before);
}

std::optional<file_range> range_of(const std::optional<range_tuple>& r) {
  if (!r) return std::nullopt;
  return file_range{std::get<0>(*r), std::get<1>(*r), std::get<2>(*r)};
}

// Opens one partition's records (the arguments every partition step takes) and returns
// `work(reader&)`, a result or status, all without the GIL.
template <class Work>
auto in_partition(const std::vector<std::string>& inputs, const std::optional<py::bytes>& data,
                  const std::string& source_name, const dedup_settings& s,
                  const std::optional<range_tuple>& range, Work work)
    -> decltype(work(std::declval<reader&>())) {
  std::optional<std::string> buffer;
  if (data) buffer = std::string(*data);
  py::gil_scoped_release nogil;
  auto in = open_partition(inputs, std::move(buffer), source_name, range_of(range), s.reader);
  if (!in) return std::move(in).error();
  return work(*in);
}

// Calls `take(doc)` on the good records of `in` at `rows` (ascending positions among them); an
// error when the records end first (rows out of order, or the input changed during the run).
template <class Take>
status for_rows(reader& in, std::span<const uint64_t> rows, Take take) {
  document doc;
  error_info err;
  uint64_t ordinal = 0;
  std::size_t next = 0;
  while (next < rows.size()) {
    const read_status rs = in.next(doc, err);
    if (rs == read_status::end) break;
    if (rs == read_status::bad_record) continue;  // counted when signing
    if (rs == read_status::failed) return err;
    if (ordinal++ != rows[next]) continue;
    take(doc);
    ++next;
  }
  if (next != rows.size()) {
    return make_error(errc::invalid_argument,
                      "rows must ascend within the partition's records (or the input changed "
                      "during the run)");
  }
  return {};
}

// Consecutive row groups of a Parquet file packed into ranges of rows of about `target` bytes
// (the file's size shared out by rows); empty for one range or an unreadable file (the reader
// reports its error).
std::vector<file_range> row_group_ranges(const std::string& path, uint64_t target) {
  std::vector<file_range> ranges;
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  auto groups = parquet_row_groups(path);
  if (ec || !groups || groups->empty() || size <= target) return ranges;
  const uint64_t rows = groups->back().first_row + groups->back().rows;
  const double bytes_per_row = rows ? static_cast<double>(size) / static_cast<double>(rows) : 0;
  file_range current;
  for (const parquet_row_group& g : *groups) {
    if (current.end > current.begin &&
        static_cast<double>(current.end - current.begin + g.rows) * bytes_per_row >
            static_cast<double>(target)) {
      ranges.push_back(current);
      current = file_range{g.first_row, g.first_row, 0};
    }
    current.end = g.first_row + g.rows;
  }
  ranges.push_back(current);
  if (ranges.size() < 2) ranges.clear();
  return ranges;
}

// Ranges of about `target` bytes: for a JSONL or TSV file (by the input_format option or the
// extension) larger than `target` and not compressed, cut at line starts, as (begin, end,
// lines before); for a Parquet file, runs of whole row groups as (first row, end row, 0).
// Empty: the file is read whole (other formats; compressed, small or unreadable files, whose
// errors the reader reports).
py::list split_file(std::string path, py::dict options, uint64_t target) {
  const dedup_settings s = read_dedup_settings(std::move(options), false);
  const input_format format = format_of(path, s.reader);
  std::vector<file_range> ranges;
  if (target > 0 && format == input_format::parquet) {
    py::gil_scoped_release nogil;
    ranges = row_group_ranges(path, target);
  }
  if (target > 0 && (format == input_format::jsonl || format == input_format::tsv)) {
    py::gil_scoped_release nogil;
    file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
    std::vector<char> block(1 << 20);
    uint64_t at = 0, lines = 0;
    file_range current;
    std::size_t got = 0;
    while (f && (got = std::fread(block.data(), 1, block.size(), f.get())) > 0) {
      if (at == 0 && starts_compressed(std::string_view(block.data(), got))) {
        break;  // compressed streams are not split
      }
      for (const char* p = block.data();
           (p = static_cast<const char*>(std::memchr(p, '\n', block.data() + got - p))) != nullptr;
           ++p) {
        ++lines;
        const uint64_t next_line = at + static_cast<uint64_t>(p - block.data()) + 1;
        if (next_line - current.begin >= target) {
          current.end = next_line;
          ranges.push_back(current);
          current = file_range{next_line, 0, lines};
        }
      }
      at += got;
    }
    if (f && std::ferror(f.get()) == 0 && !ranges.empty() && at > 0) {
      if (current.begin < at) ranges.push_back(file_range{current.begin, at, current.lines_before});
    } else {
      ranges.clear();
    }
  }
  py::list out;
  if (ranges.size() < 2) return out;
  for (const file_range& r : ranges) out.append(py::make_tuple(r.begin, r.end, r.lines_before));
  return out;
}

py::dict sign(std::vector<std::string> inputs, std::optional<py::bytes> data,
              std::string source_name, py::dict options, std::optional<range_tuple> range) {
  const dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  signed_part p = take(in_partition(inputs, data, source_name, s, range,
                                    [&](reader& in) { return sign_all(in, s); }));
  py::list ids(p.ids.size());
  for (std::size_t i = 0; i < p.ids.size(); ++i) ids[i] = id_object(p.ids[i], p.id_is_number[i]);
  py::dict out;
  out["ids"] = ids;
  out["fingerprint"] = to_array(p.fingerprint);
  out["has_fingerprint"] = to_array(p.has_fingerprint);
  out["url_key"] = to_array(p.url_key);
  out["title_key"] = to_array(p.title_key);
  out["content_key"] = to_array(p.content_key);
  out["length"] = to_array(p.length);
  out["shingle_count"] = to_array(p.shingle_count);
  out["time"] = to_array(p.time);
  out["field"] = to_array(p.field);
  out["band_keys"] = to_array(p.band_keys);
  py::dict reasons;
  for (const auto& [reason, n] : p.skipped_reasons) reasons[py::str(reason)] = n;
  out["skipped"] = p.skipped;
  out["skipped_inputs"] = p.skipped_inputs;
  out["skipped_reasons"] = reasons;
  out["messages"] = p.messages;
  out["invalid_utf8"] = p.invalid_utf8;
  out["short"] = p.short_documents;
  out["bytes"] = p.bytes;
  out["format"] = p.format;
  return out;
}

// The verification shingle arrays of the documents at `rows` (ascending positions among the
// partition's good records), signed anew from the partition's records, as (offsets, hashes):
// sign results keep no shingle arrays, since only the documents in candidate pairs or exact
// groups need them, and re-reading a partition costs less than holding every array.
py::tuple sketches(std::vector<std::string> inputs, std::optional<py::bytes> data,
                   std::string source_name, py::dict options, std::optional<range_tuple> range,
                   const u64_array& rows) {
  const dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  std::vector<uint64_t> offsets{0};
  std::vector<uint32_t> hashes;
  check(in_partition(inputs, data, source_name, s, range, [&](reader& in) -> status {
    auto signer = document_signer::create(s.dedup);
    if (!signer) return std::move(signer).error();
    doc_signature sig;
    return for_rows(in, view(rows), [&](const document& doc) {
      signer->sign(doc, sig, doc.format == input_format::csv ? in.header() : "");
      hashes.insert(hashes.end(), sig.shingles.begin(), sig.shingles.end());
      offsets.push_back(hashes.size());
    });
  }));
  return py::make_tuple(to_array(offsets), to_array(hashes));
}

// Writes the records of one partition whose `keep` flag is set into DIR/STEM.<ext>[.zst], as the
// CLI writes kept.<ext>[.zst] (the library's write_kept_part). `empty_format`: the format named
// when nothing is kept.
uint64_t write_kept(std::vector<std::string> inputs, std::optional<py::bytes> data,
                    std::string source_name, py::dict options, std::optional<range_tuple> range,
                    const u8_array& keep, std::string dir, std::string stem, bool zstd,
                    std::string empty_format) {
  const dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  const input_format fallback = take(parse_input_format(empty_format));
  const auto flags = view(keep);
  return take(in_partition(inputs, data, source_name, s, range, [&](reader& in) {
    return write_kept_part(in, flags, dir, stem, zstd, fallback);
  }));
}

// Writes every record of one partition with its decision (the frame's columns, one row per good
// record; `duplicate_of` holds None, str or the number a numeric id came back as) into
// DIR/STEM.<ext>[.zst], as the CLI writes annotated.<ext>[.zst] (write_annotated_part).
uint64_t write_annotated(std::vector<std::string> inputs, std::optional<py::bytes> data,
                         std::string source_name, py::dict options,
                         std::optional<range_tuple> range, const u8_array& keep,
                         const i64_array& cluster, py::list duplicate_of, const i64_array& distance,
                         const u8_array& layer, const f64_array& jaccard, std::string dir,
                         std::string stem, bool zstd, std::string empty_format) {
  const dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  const input_format fallback = take(parse_input_format(empty_format));
  const std::size_t n = static_cast<std::size_t>(keep.size());
  if (cluster.size() != keep.size() || distance.size() != keep.size() ||
      layer.size() != keep.size() || jaccard.size() != keep.size() || duplicate_of.size() != n) {
    throw py::value_error("dask_write_annotated: the decision columns differ in length");
  }
  const auto keeps = view(keep), layers = view(layer);
  const auto clusters = view(cluster), distances = view(distance);
  const auto jaccards = view(jaccard);
  // The representatives' ids first: the notes view these strings.
  std::vector<std::string> reps(n);
  std::vector<uint8_t> rep_is_number(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (keeps[i] != 0) continue;  // a kept record's duplicate_of is null (None or NaN)
    const py::handle rep = duplicate_of[i];
    if (rep.is_none()) throw py::value_error("dask_write_annotated: a duplicate without its id");
    rep_is_number[i] = !py::isinstance<py::str>(rep);
    reps[i] = py::str(rep).cast<std::string>();
  }
  std::vector<record_annotation> notes(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (layers[i] > static_cast<uint8_t>(dedup_layer::near)) {
      throw py::value_error("dask_write_annotated: a layer code out of range");
    }
    notes[i] = {.keep = keeps[i] != 0,
                .cluster = static_cast<uint64_t>(clusters[i]),
                .duplicate_of = reps[i],
                .duplicate_of_is_number = rep_is_number[i] != 0,
                .distance = static_cast<int>(distances[i]),
                .layer = static_cast<dedup_layer>(layers[i]),
                .jaccard = jaccards[i]};
  }
  return take(in_partition(inputs, data, source_name, s, range, [&](reader& in) {
    return write_annotated_part(in, notes, dir, stem, zstd, fallback);
  }));
}

// The good records at `rows` (ascending positions among the partition's good records) as
// (id, text as the report shows it), for the report's sample clusters.
py::list sample_texts(std::vector<std::string> inputs, std::optional<py::bytes> data,
                      std::string source_name, py::dict options, std::optional<range_tuple> range,
                      const u64_array& rows) {
  const dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  std::vector<std::pair<std::string, bool>> ids;
  std::vector<std::string> texts;
  check(in_partition(inputs, data, source_name, s, range, [&](reader& in) {
    return for_rows(in, view(rows), [&](const document& doc) {
      ids.emplace_back(doc.id, doc.id_is_number);
      texts.push_back(sample_text(doc, s.dedup.detection.fingerprint.normalize.html));
    });
  }));
  py::list out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.append(py::make_tuple(id_object(ids[i].first, ids[i].second), texts[i]));
  }
  return out;
}

py::list expand(std::vector<std::string> inputs, bool keep_missing) {
  auto expanded = take(expand_inputs(inputs, keep_missing));
  py::list out;
  for (const std::string& path : expanded) out.append(path);
  return out;
}

}  // namespace

void bind_dask_partitions(py::module_& m) {
  m.def("dask_sign", &sign, py::arg("inputs"), py::arg("data"), py::arg("source_name"),
        py::arg("options"), py::arg("range"));
  m.def("dask_sketches", &sketches, py::arg("inputs"), py::arg("data"), py::arg("source_name"),
        py::arg("options"), py::arg("range"), py::arg("rows"));
  m.def("dask_split_file", &split_file, py::arg("path"), py::arg("options"), py::arg("target"));
  m.def("dask_write_kept", &write_kept, py::arg("inputs"), py::arg("data"), py::arg("source_name"),
        py::arg("options"), py::arg("range"), py::arg("keep"), py::arg("dir"), py::arg("stem"),
        py::arg("zstd"), py::arg("empty_format"));
  m.def("dask_write_annotated", &write_annotated, py::arg("inputs"), py::arg("data"),
        py::arg("source_name"), py::arg("options"), py::arg("range"), py::arg("keep"),
        py::arg("cluster"), py::arg("duplicate_of"), py::arg("distance"), py::arg("layer"),
        py::arg("jaccard"), py::arg("dir"), py::arg("stem"), py::arg("zstd"),
        py::arg("empty_format"));
  m.def("dask_sample_texts", &sample_texts, py::arg("inputs"), py::arg("data"),
        py::arg("source_name"), py::arg("options"), py::arg("range"), py::arg("rows"));
  m.def("expand_inputs", &expand, py::arg("inputs"), py::arg("keep_missing"));
}

}  // namespace simdup::python
