// The per-partition C++ steps of simdup.dask, numpy in and out: signatures of a partition's
// records, candidate pairs within groups of fingerprints that share a table prefix (all_pairs),
// MinHash candidates within one band's buckets (minhash_pairs), Jaccard of sketch pairs, and the
// batch engine over whole connected components. Python moves the arrays between workers.
#include "bindings.hpp"
#include "chunk_signer.hpp"

#include <simdup/all_pairs.hpp>
#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/minhash.hpp>
#include <simdup/plan.hpp>
#include <simdup/reader.hpp>
#include <simdup/simhash.hpp>
#include <simdup/verify.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
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

template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

template <class T>
std::span<const T> view(const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

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

using u32_array = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;
using u8_array = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;
using f64_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

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

// The blocks all_pairs uses inside a group whose members share the bits of one table's
// contiguous mask, there rotated to the lowest bits (rotation keeps distances): one block more
// than the planner's count for `n` fingerprints (the planner counts on 64 informative bits; one
// more was the fastest, on uniform and on biased fingerprints alike: docs/distributed.md), laid
// over the other bits, the last block also holding the shared ones. all_pairs' own plan would cut
// the 64 bits as the table layout does, and its table on the shared block would compare every
// pair of the group. nullopt: plan per group.
std::optional<index_layout> group_layout(uint64_t mask, uint64_t n, int k) {
  const int shared = std::popcount(mask);
  const uint64_t run = mask >> std::countr_zero(mask);
  if (mask == 0 || (run & (run + 1)) != 0) return std::nullopt;  // not one contiguous run
  auto plan = make_plan({.n = n, .k = k, .purpose = plan_purpose::batch});
  if (!plan) return std::nullopt;
  index_layout layout = plan->layout;
  const int blocks = static_cast<int>(layout.widths.size()) + 1;
  layout.widths.resize(blocks);
  const int free_bits = 64 - shared;
  if (free_bits < blocks) return std::nullopt;
  for (int i = 0; i < blocks; ++i) layout.widths[i] = free_bits / blocks + (i < free_bits % blocks);
  layout.widths.back() += shared;
  if (!layout.validate()) return std::nullopt;
  return layout;
}

// Pairs within k inside each group [starts[g], starts[g+1]) of `fingerprints` (positions),
// whose members share the bits of masks[tables[g]]; each pair only from the first table whose
// bits it shares (tables in order), so it is found once across the groups of all tables. The
// blocks are planned once per table (group_layout, for the table's mean group size).
py::tuple group_pairs(const u64_array& fingerprints, const u64_array& starts,
                      const u64_array& group_tables, const u64_array& table_masks, int k) {
  const auto fps = view(fingerprints);
  const auto bounds = view(starts);
  const auto tables = view(group_tables);
  const auto masks = view(table_masks);
  if (bounds.empty() || tables.size() + 1 != bounds.size()) {
    throw py::value_error("tables must have one entry per group (starts has one more)");
  }
  for (std::size_t g = 0; g < tables.size(); ++g) {
    if (tables[g] >= masks.size()) throw py::value_error("tables must index the masks");
    if (bounds[g] > bounds[g + 1] || bounds[g + 1] > fps.size()) {
      throw py::value_error("group bounds must increase within the fingerprints");
    }
  }
  std::vector<uint64_t> a, b;
  status failed;
  {
    py::gil_scoped_release nogil;
    std::vector<uint64_t> rows(masks.size()), groups(masks.size());
    for (std::size_t g = 0; g < tables.size(); ++g) {
      rows[tables[g]] += bounds[g + 1] - bounds[g];
      ++groups[tables[g]];
    }
    std::vector<std::optional<index_layout>> layouts(masks.size());
    for (std::size_t t = 0; t < masks.size(); ++t) {
      if (groups[t] > 0) layouts[t] = group_layout(masks[t], rows[t] / groups[t], k);
    }
    std::vector<uint64_t> rotated;
    for (std::size_t g = 0; g < tables.size() && failed; ++g) {
      const uint64_t first = bounds[g], n = bounds[g + 1] - first;
      if (n < 2) continue;
      const std::size_t t = tables[g];
      all_pairs_options ap;
      ap.layout.k = k;
      ap.threads = 1;  // one task per core: Dask runs the groups in parallel
      std::span<const uint64_t> group = fps.subspan(first, n);
      if (layouts[t]) {
        ap.layout = *layouts[t];
        const int shift = std::countr_zero(masks[t]);
        rotated.resize(n);
        for (uint64_t i = 0; i < n; ++i) rotated[i] = std::rotr(group[i], shift);
        group = rotated;
      }
      auto run = all_pairs(group, ap, [&](std::span<const index_pair> ps) {
        for (const index_pair& p : ps) {
          const uint64_t x = fps[first + p.a] ^ fps[first + p.b];
          if (std::any_of(masks.begin(), masks.begin() + static_cast<std::ptrdiff_t>(t),
                          [x](uint64_t m) { return (x & m) == 0; })) {
            continue;  // an earlier table's group has it
          }
          a.push_back(first + p.a);
          b.push_back(first + p.b);
        }
        return true;
      });
      if (!run) failed = std::move(run).error();
    }
  }
  check(failed);
  return py::make_tuple(to_array(a), to_array(b));
}

// MinHash candidates of one band: `keys` (0: none) of documents in keep-policy order, each
// bucket capped as minhash_pairs caps it; pairs within k are left to SimHash.
py::tuple bucket_pairs(const u64_array& keys, const u64_array& fingerprints, int k,
                       std::size_t max_bucket) {
  const auto ks = view(keys);
  const auto fps = view(fingerprints);
  if (ks.size() != fps.size()) throw py::value_error("keys and fingerprints differ in length");
  std::vector<index_pair> pairs;
  {
    py::gil_scoped_release nogil;
    minhash_options mo;
    mo.bands = 1;
    mo.max_bucket = max_bucket;
    minhash_pairs(
        ks, ks.size(), mo,
        [&](uint32_t x, uint32_t y) { return hamming_distance(fps[x], fps[y]) <= k; }, pairs);
  }
  std::vector<uint64_t> a(pairs.size()), b(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    a[i] = pairs[i].a;
    b[i] = pairs[i].b;
  }
  return py::make_tuple(to_array(a), to_array(b));
}

// Jaccard of pair i: sketch rows_a[i] of store A against sketch rows_b[i] of store B (each store a
// ragged array: offsets with one entry per sketch plus one, into hashes), as the batch engine's
// verification computes it. Pairs carry row numbers only, so no sketch is copied per pair.
py::array_t<double> jaccards(const u64_array& offsets_a, const u32_array& hashes_a,
                             const u64_array& rows_a, const u64_array& offsets_b,
                             const u32_array& hashes_b, const u64_array& rows_b, double threshold,
                             std::size_t max_hashes) {
  const auto oa = view(offsets_a), ob = view(offsets_b);
  const auto ha = view(hashes_a), hb = view(hashes_b);
  const auto ra = view(rows_a), rb = view(rows_b);
  if (oa.empty() || ob.empty() || oa.back() > ha.size() || ob.back() > hb.size()) {
    throw py::value_error("offsets must have one entry per sketch plus one, within the hashes");
  }
  if (ra.size() != rb.size()) throw py::value_error("rows_a and rows_b differ in length");
  const auto within = [](std::span<const uint64_t> rows, std::span<const uint64_t> offsets) {
    return std::all_of(rows.begin(), rows.end(), [&](uint64_t r) {
      return r + 1 < offsets.size() && offsets[r] <= offsets[r + 1];
    });
  };
  if (!within(ra, oa) || !within(rb, ob)) {
    throw py::value_error("rows must name sketches of their store");
  }
  py::array_t<double> out(static_cast<py::ssize_t>(ra.size()));
  double* o = out.mutable_data();
  py::gil_scoped_release nogil;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    const auto a = ha.subspan(oa[ra[i]], oa[ra[i] + 1] - oa[ra[i]]);
    const auto b = hb.subspan(ob[rb[i]], ob[rb[i] + 1] - ob[rb[i]]);
    o[i] = max_hashes > 0 ? sketch_jaccard(a, b, max_hashes) : jaccard_at_least(a, b, threshold);
  }
  return out;
}

// Pairs whose shingle array sizes alone rule the threshold out (jaccard_at_least's own first
// test, so verification would reject them): such a pair needs no array sent anywhere.
py::array_t<bool> size_rejects(const u32_array& counts_a, const u32_array& counts_b,
                               double threshold) {
  const auto na = view(counts_a), nb = view(counts_b);
  if (na.size() != nb.size()) throw py::value_error("counts_a and counts_b differ in length");
  py::array_t<bool> out(static_cast<py::ssize_t>(na.size()));
  bool* o = out.mutable_data();
  for (std::size_t i = 0; i < na.size(); ++i) {
    o[i] = na[i] + nb[i] == 0 || jaccard_size_bound(na[i], nb[i], threshold).has_value();
  }
  return out;
}

// Rows `rows` of a ragged uint32 column (offsets, n + 1 of them, into flat): new offsets and the
// rows' values, one copy per row. numpy would build an index as long as the values (8 bytes for
// each 4-byte hash) and gather through it: the shingle arrays of a partition's documents in
// components are hundreds of MB.
py::tuple ragged_take(const u64_array& offsets, const u32_array& flat, const i64_array& rows) {
  const auto off = view(offsets);
  const auto h = view(flat);
  const auto r = view(rows);
  const auto n = static_cast<int64_t>(off.size()) - 1;
  if (std::any_of(r.begin(), r.end(), [&](int64_t row) {
        return row < 0 || row >= n || off[row] > off[row + 1] || off[row + 1] > h.size();
      })) {
    throw py::value_error("rows must name rows of the offsets, within the values");
  }
  py::array_t<uint64_t> out_off(static_cast<py::ssize_t>(r.size() + 1));
  uint64_t* o = out_off.mutable_data();
  o[0] = 0;
  for (std::size_t i = 0; i < r.size(); ++i) o[i + 1] = o[i] + (off[r[i] + 1] - off[r[i]]);
  py::array_t<uint32_t> out(static_cast<py::ssize_t>(o[r.size()]));
  uint32_t* v = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::copy(h.begin() + static_cast<std::ptrdiff_t>(off[r[i]]),
                h.begin() + static_cast<std::ptrdiff_t>(off[r[i] + 1]), v + o[i]);
    }
  }
  return py::make_tuple(std::move(out_off), std::move(out));
}

// Per top byte value, how many hashes of each sketch at `rows` have it (the counts the CLI's
// verification rules pairs out by, shingle_store::top_byte_counts), 4 bits each, saturated at 15
// ("15 or more"): 128 bytes per sketch, sent in place of the whole array (about 1,900 bytes for a
// 500-character text). Value v is in byte v / 2, the low half for even v.
constexpr std::size_t kTopBytes = 256;
constexpr std::size_t kPackedTops = kTopBytes / 2;
constexpr uint32_t kSaturated = 15;

py::array_t<uint8_t> top_bytes(const u64_array& offsets, const u32_array& hashes,
                               const u64_array& rows) {
  const auto off = view(offsets);
  const auto h = view(hashes);
  const auto r = view(rows);
  if (std::any_of(r.begin(), r.end(), [&](uint64_t row) {
        return row + 1 >= off.size() || off[row] > off[row + 1] || off[row + 1] > h.size();
      })) {
    throw py::value_error("rows must name sketches of the offsets, within the hashes");
  }
  py::array_t<uint8_t> out(
      {static_cast<py::ssize_t>(r.size()), static_cast<py::ssize_t>(kPackedTops)});
  uint8_t* o = out.mutable_data();
  py::gil_scoped_release nogil;
  std::array<uint32_t, kTopBytes> counts{};
  for (std::size_t i = 0; i < r.size(); ++i) {
    counts.fill(0);
    for (uint64_t j = off[r[i]]; j < off[r[i] + 1]; ++j) ++counts[h[j] >> 24];
    for (std::size_t v = 0; v < kPackedTops; ++v) {
      o[i * kPackedTops + v] = static_cast<uint8_t>(std::min(counts[2 * v], kSaturated) |
                                                    std::min(counts[2 * v + 1], kSaturated) << 4);
    }
  }
  return out;
}

// Pairs that the top-byte counts rule out, as the CLI's verification rules them out before
// reading the second array (jaccard_shared_bound of the sum of the smaller counts): pair i is
// packed counts rows_a[i] (`tops_a`, from top_bytes; counts_a hashes in all) against sketch
// rows_b[i] of this store. A saturated count bounds nothing, so the other side's is taken there.
py::array_t<bool> shared_rejects(const u8_array& tops_a, const u32_array& counts_a,
                                 const u64_array& rows_a, const u64_array& offsets_b,
                                 const u32_array& hashes_b, const u64_array& rows_b,
                                 double threshold) {
  const auto ta = view(tops_a);
  const auto na = view(counts_a);
  const auto ra = view(rows_a), ob = view(offsets_b), rb = view(rows_b);
  const auto hb = view(hashes_b);
  if (ta.size() != na.size() * kPackedTops) {
    throw py::value_error("tops_a must have 128 bytes (top_bytes) per count");
  }
  if (ra.size() != rb.size()) throw py::value_error("rows_a and rows_b differ in length");
  if (std::any_of(ra.begin(), ra.end(), [&](uint64_t row) { return row >= na.size(); }) ||
      std::any_of(rb.begin(), rb.end(), [&](uint64_t row) {
        return row + 1 >= ob.size() || ob[row] > ob[row + 1] || ob[row + 1] > hb.size();
      })) {
    throw py::value_error("rows must name summaries and sketches of their stores");
  }
  py::array_t<bool> out(static_cast<py::ssize_t>(ra.size()));
  bool* o = out.mutable_data();
  py::gil_scoped_release nogil;
  std::array<uint32_t, kTopBytes> counts_b{};
  const auto at_most = [](uint32_t a, uint32_t b) { return a == kSaturated ? b : std::min(a, b); };
  for (std::size_t i = 0; i < ra.size(); ++i) {
    counts_b.fill(0);
    for (uint64_t j = ob[rb[i]]; j < ob[rb[i] + 1]; ++j) ++counts_b[hb[j] >> 24];
    const uint8_t* top_a = ta.data() + ra[i] * kPackedTops;
    std::size_t most_shared = 0;
    for (std::size_t v = 0; v < kPackedTops; ++v) {
      most_shared += at_most(top_a[v] & 15u, counts_b[2 * v]) +
                     at_most(static_cast<uint32_t>(top_a[v] >> 4), counts_b[2 * v + 1]);
    }
    o[i] = jaccard_shared_bound(most_shared, na[ra[i]], ob[rb[i] + 1] - ob[rb[i]], threshold)
               .has_value();
  }
  return out;
}

// The signature columns of whole connected components (documents in global input order), as
// _members_split gathers them; checked for consistent lengths on construction (with the GIL).
struct component_columns {
  u64_array fp, url, title, content, offsets, band_keys;
  u8_array has_fp;
  u32_array length, shingles;
  i64_array time;
  f64_array field;
  std::size_t n = 0, bands = 0;

  component_columns(const py::dict& c, std::size_t minhash_bands)
      : fp(c["fingerprint"].cast<u64_array>()),
        url(c["url_key"].cast<u64_array>()),
        title(c["title_key"].cast<u64_array>()),
        content(c["content_key"].cast<u64_array>()),
        offsets(c["shingle_offsets"].cast<u64_array>()),
        band_keys(c["band_keys"].cast<u64_array>()),
        has_fp(c["has_fingerprint"].cast<u8_array>()),
        length(c["length"].cast<u32_array>()),
        shingles(c["shingles"].cast<u32_array>()),
        time(c["time"].cast<i64_array>()),
        field(c["field"].cast<f64_array>()),
        n(static_cast<std::size_t>(fp.size())),
        bands(minhash_bands) {
    for (py::ssize_t size : {has_fp.size(), url.size(), title.size(), content.size(), length.size(),
                             time.size(), field.size()}) {
      if (static_cast<std::size_t>(size) != n) throw py::value_error("columns differ in length");
    }
    if (static_cast<std::size_t>(offsets.size()) != n + 1 ||
        view(offsets).back() > static_cast<uint64_t>(shingles.size()) ||
        static_cast<std::size_t>(band_keys.size()) != n * bands) {
      throw py::value_error("shingle offsets or band keys do not match the columns");
    }
  }

  // Document i's signature, as the signer made it. Callable without the GIL.
  result<doc_signature> at(std::size_t i) const {
    doc_signature sig;
    sig.fingerprint = fp.data()[i];
    sig.has_fingerprint = has_fp.data()[i] != 0;
    sig.url_key = url.data()[i];
    sig.title_key = title.data()[i];
    sig.content_key = content.data()[i];
    sig.length = length.data()[i];
    sig.time = time.data()[i];
    sig.field = field.data()[i];
    const auto off = view(offsets);
    if (off[i] > off[i + 1]) return make_error(errc::invalid_argument, "bad shingle offsets");
    const auto hashes = view(shingles).subspan(off[i], off[i + 1] - off[i]);
    sig.shingles.assign(hashes.begin(), hashes.end());
    const uint64_t* keys = band_keys.data() + i * bands;
    // A document without shingles has all-zero keys; the engine expects none then.
    if (bands > 0 && std::any_of(keys, keys + bands, [](uint64_t x) { return x != 0; })) {
      sig.band_keys.assign(keys, keys + bands);
    }
    return sig;
  }
};

py::dict decisions_dict(const std::vector<dedup_decision>& decisions) {
  const std::size_t n = decisions.size();
  py::array_t<uint32_t> rep(static_cast<py::ssize_t>(n));
  py::array_t<uint8_t> layer(static_cast<py::ssize_t>(n));
  py::array_t<int8_t> distance(static_cast<py::ssize_t>(n));
  py::array_t<float> jaccard(static_cast<py::ssize_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    rep.mutable_data()[i] = decisions[i].representative;
    layer.mutable_data()[i] = static_cast<uint8_t>(decisions[i].layer);
    distance.mutable_data()[i] = decisions[i].distance;
    jaccard.mutable_data()[i] = decisions[i].jaccard;
  }
  py::dict out;
  out["representative"] = rep;
  out["layer"] = layer;
  out["distance"] = distance;
  out["jaccard"] = jaccard;
  return out;
}

// The batch engine over whole connected components (documents in global input order);
// decisions by position. With `against` (earlier runs' indexes, as simdup.dedup's) the task
// holds every document, components of one and all, each matched against the indexes by the
// engine: a document's match depends on it and its exact group only, so whole components give
// the CLI's decisions. Then also, by position: "against" (1 + the index, or 0), "against_ids"
// (the index document's id, or None), "against_documents" (its position in the index), and
// the pair counts "against_candidates" and "against_rejected".
py::dict cluster(py::dict columns, py::dict options, std::vector<std::string> against,
                 bool against_only) {
  dedup_settings s = read_dedup_settings(std::move(options), false);
  s.dedup.mode = dedup_mode::batch;
  open_against(s, against, against_only, true);
  const component_columns c(columns, s.dedup.detection.minhash.bands);
  result<std::vector<dedup_decision>> outcome = make_error(errc::internal, "not run");
  uint64_t engine_bytes = 0, spilled = 0, against_candidates = 0, against_rejected = 0;
  {
    py::gil_scoped_release nogil;
    outcome = [&]() -> result<std::vector<dedup_decision>> {
      auto engine = batch_deduplicator::create(s.dedup);
      if (!engine) return std::move(engine).error();
      for (std::size_t i = 0; i < c.n; ++i) {
        auto sig = c.at(i);
        if (!sig) return std::move(sig).error();
        if (auto st = engine->add(std::move(sig).value()); !st) return std::move(st).error();
      }
      auto decisions = engine->finish();
      engine_bytes = engine->memory_bytes();
      spilled = engine->spilled_bytes();
      against_candidates = engine->against_candidate_pairs();
      against_rejected = engine->against_rejected_pairs();
      return decisions;
    }();
  }
  const std::vector<dedup_decision> decisions = take(std::move(outcome));
  py::dict out = decisions_dict(decisions);
  out["engine_bytes"] = engine_bytes;  // summary.json's memory, as simdup.dedup reports it
  out["spilled_bytes"] = spilled;
  if (!against.empty()) {
    const auto n = static_cast<py::ssize_t>(decisions.size());
    py::array_t<uint8_t> earlier(n);
    py::array_t<uint32_t> documents(n);
    py::list ids(static_cast<std::size_t>(n));
    for (py::ssize_t i = 0; i < n; ++i) {
      const dedup_decision& d = decisions[static_cast<std::size_t>(i)];
      earlier.mutable_data()[i] = d.against;
      documents.mutable_data()[i] = d.against != 0 ? d.representative : 0;
      if (d.against != 0) {
        const dedup_index& index = *s.dedup.against[d.against - 1];
        ids[static_cast<std::size_t>(i)] = id_object(std::string(index.id(d.representative)),
                                                     index.id_is_number(d.representative));
      } else {
        ids[static_cast<std::size_t>(i)] = py::none();
      }
    }
    out["against"] = earlier;
    out["against_ids"] = ids;
    out["against_documents"] = documents;
    out["against_candidates"] = against_candidates;
    out["against_rejected"] = against_rejected;
  }
  return out;
}

// The indexes of earlier runs a Dask run is given, opened and checked against its profile by
// the driver before any task (the errors of simdup.dedup's against=): their sizes, in order.
// Cached: the command line checks them before simdup.dask.dedup checks them again.
std::vector<uint64_t> against_sizes(py::dict options, std::vector<std::string> against,
                                    bool against_only) {
  dedup_settings s = read_dedup_settings(std::move(options), false);
  open_against(s, against, against_only, true);
  std::vector<uint64_t> sizes;
  for (const auto& index : s.dedup.against) sizes.push_back(index->size());
  return sizes;
}

// The stream engine over whole connected components of the exact links and the near
// candidates among documents no earlier one shares a key with (documents in global input
// order): each document meets the kept documents the CLI's single pass would compare it with,
// so the decisions and the candidate and rejected pair counts are the CLI's.
py::dict stream(py::dict columns, py::dict options) {
  dedup_settings s = read_dedup_settings(std::move(options), false);
  s.dedup.mode = dedup_mode::stream;
  const component_columns c(columns, s.dedup.detection.minhash.bands);
  std::vector<dedup_decision> decisions;
  uint64_t candidates = 0, rejected = 0, engine_bytes = 0, spilled = 0;
  status outcome;
  {
    py::gil_scoped_release nogil;
    outcome = [&]() -> status {
      auto engine = stream_deduplicator::create(s.dedup);
      if (!engine) return std::move(engine).error();
      for (std::size_t i = 0; i < c.n; ++i) {
        auto sig = c.at(i);
        if (!sig) return std::move(sig).error();
        auto d = engine->add(*sig);
        if (!d) return std::move(d).error();
        decisions.push_back(*d);
      }
      candidates = engine->candidate_pairs();
      rejected = engine->rejected_pairs();
      engine_bytes = engine->memory_bytes();
      spilled = engine->spilled_bytes();
      return {};
    }();
  }
  check(outcome);
  py::dict out = decisions_dict(decisions);
  out["candidates"] = candidates;
  out["rejected"] = rejected;
  out["engine_bytes"] = engine_bytes;
  out["spilled_bytes"] = spilled;
  return out;
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

// One report member from its (id, text, layer code, distance, jaccard) tuple.
sample_document sample_member(py::handle t) {
  const auto m = py::reinterpret_borrow<py::tuple>(t);
  if (m.size() != 5)
    throw py::value_error("a sample member is (id, text, layer, distance, jaccard)");
  const auto layer = m[2].cast<int>();
  if (layer < 0 || layer > static_cast<int>(dedup_layer::near)) {
    throw py::value_error("a sample member's layer code is out of range");
  }
  return {py::str(m[0]).cast<std::string>(), m[1].cast<std::string>(),
          static_cast<dedup_layer>(layer), m[3].cast<int>(), m[4].cast<double>()};
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

// report.html of a simdup.dask run: the library's page (the one `simdup dedup` writes) over the
// counts of the run's summary dict (simdup.dask._summary), the parameters of its options, the
// names of its inputs and the sample clusters, each (cluster, size, representative, members) with
// the representative as (id, text) and each member as (id, text, layer, distance, jaccard).
std::string report(py::dict summary, py::dict options, std::vector<std::string> inputs,
                   py::list samples) {
  const dedup_settings s = read_dedup_settings(std::move(options), false);
  dedup_summary sum;
  describe_parameters(sum, s.dedup, s.keep_spec, s.threads);
  const auto count = [](py::handle dict, const char* key) {
    return py::reinterpret_borrow<py::dict>(dict)[key].cast<uint64_t>();
  };
  const py::handle docs = summary["documents"], pairs = summary["pairs"];
  sum.inputs = std::move(inputs);
  sum.input_count = count(summary["inputs"], "count");
  sum.skipped_inputs = count(summary["inputs"], "skipped");
  sum.read = count(docs, "read");
  sum.kept = count(docs, "kept");
  sum.duplicates = count(docs, "duplicates");
  sum.skipped = count(docs, "skipped");
  sum.short_documents = count(docs, "short");
  sum.invalid_utf8 = count(docs, "invalid_utf8");
  sum.candidate_pairs = count(pairs, "candidates");
  sum.rejected_pairs = count(pairs, "rejected_by_verify");
  sum.minhash_pairs = count(pairs, "minhash_candidates");
  sum.skipped_reasons = summary["skipped_reasons"].cast<std::map<std::string, uint64_t>>();
  for (auto layer : {dedup_layer::url, dedup_layer::title, dedup_layer::exact, dedup_layer::near}) {
    sum.by_layer[static_cast<std::size_t>(layer)] =
        count(summary["duplicates_by_layer"], layer_name(layer));
  }
  for (const auto& [distance, n] : summary["distance_histogram"].cast<py::dict>()) {
    const std::string d = distance.cast<std::string>();
    sum.distance_histogram[d == "unknown" ? 65 : std::stoul(d)] = n.cast<uint64_t>();
  }
  for (const auto& [size, n] : summary["clusters"]["by_size"].cast<py::dict>()) {
    sum.cluster_sizes[std::stoull(size.cast<std::string>())] = n.cast<uint64_t>();
  }
  sum.bytes = summary["bytes"].cast<uint64_t>();
  sum.output_format = summary["output_format"].cast<std::string>();
  for (const auto& [phase, seconds] : summary["timings"].cast<py::dict>()) {
    sum.seconds_by_phase.emplace_back(phase.cast<std::string>(), seconds.cast<double>());
  }
  sum.seconds_total = summary["seconds_total"].cast<double>();
  for (py::handle item : samples) {
    const auto c = py::reinterpret_borrow<py::tuple>(item);
    if (c.size() != 4)
      throw py::value_error("a sample is (cluster, size, representative, members)");
    cluster_sample sample;
    sample.cluster = c[0].cast<uint64_t>();
    sample.size = c[1].cast<uint64_t>();
    const auto rep = c[2].cast<py::tuple>();
    sample.representative = {py::str(rep[0]).cast<std::string>(), rep[1].cast<std::string>(),
                             dedup_layer::none, -1, NAN};
    for (py::handle m : c[3].cast<py::list>()) sample.members.push_back(sample_member(m));
    sum.samples.push_back(std::move(sample));
  }
  return report_html(sum);
}

py::list expand(std::vector<std::string> inputs, bool keep_missing) {
  auto expanded = take(expand_inputs(inputs, keep_missing));
  py::list out;
  for (const std::string& path : expanded) out.append(path);
  return out;
}

}  // namespace

void bind_dask(py::module_& m) {
  m.def("dask_sign", &sign, py::arg("inputs"), py::arg("data"), py::arg("source_name"),
        py::arg("options"), py::arg("range"));
  m.def("dask_sketches", &sketches, py::arg("inputs"), py::arg("data"), py::arg("source_name"),
        py::arg("options"), py::arg("range"), py::arg("rows"));
  m.def("dask_split_file", &split_file, py::arg("path"), py::arg("options"), py::arg("target"));
  m.def("dask_group_pairs", &group_pairs, py::arg("fingerprints"), py::arg("starts"),
        py::arg("tables"), py::arg("masks"), py::arg("k"));
  m.def("dask_bucket_pairs", &bucket_pairs, py::arg("keys"), py::arg("fingerprints"), py::arg("k"),
        py::arg("max_bucket"));
  m.def("dask_jaccards", &jaccards, py::arg("offsets_a"), py::arg("hashes_a"), py::arg("rows_a"),
        py::arg("offsets_b"), py::arg("hashes_b"), py::arg("rows_b"), py::arg("threshold"),
        py::arg("max_hashes"));
  m.def("dask_size_rejects", &size_rejects, py::arg("counts_a"), py::arg("counts_b"),
        py::arg("threshold"));
  m.def("dask_ragged_take", &ragged_take, py::arg("offsets"), py::arg("flat"), py::arg("rows"));
  m.def("dask_top_bytes", &top_bytes, py::arg("offsets"), py::arg("hashes"), py::arg("rows"));
  m.def("dask_shared_rejects", &shared_rejects, py::arg("tops_a"), py::arg("counts_a"),
        py::arg("rows_a"), py::arg("offsets_b"), py::arg("hashes_b"), py::arg("rows_b"),
        py::arg("threshold"));
  m.def("dask_cluster", &cluster, py::arg("columns"), py::arg("options"),
        py::arg("against") = std::vector<std::string>{}, py::arg("against_only") = false);
  m.def("dask_against_sizes", &against_sizes, py::arg("options"), py::arg("against"),
        py::arg("against_only"));
  m.def("dask_stream", &stream, py::arg("columns"), py::arg("options"));
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
  m.def("dask_report_html", &report, py::arg("summary"), py::arg("options"), py::arg("inputs"),
        py::arg("samples"));
  m.attr("MINHASH_MAX_BUCKET") = minhash_options{}.max_bucket;
  m.def("expand_inputs", &expand, py::arg("inputs"), py::arg("keep_missing"));
}

}  // namespace simdup::python
