// What the Parquet reader harness (fuzz/parquet_reader_fuzz.cpp) checks on every input, shared
// with the replay test (tests/unit/io/parquet_reader_fuzz_test.cpp) that runs without clang.
//
// check_parquet(): the bytes, as a file (a memfd: DuckDB opens a path), read as Parquet with
// the first byte picking the field names. The reader must terminate, keep its contract (records
// have an id and their row number, rows increase, statistics agree, `end` and `failed` are
// sticky, a failure is an error naming the input with a code of its own), read the same bytes
// the same way twice, and with skip_failed_inputs give the same records followed by one bad
// record for the failure. Returns "" when everything holds, else what broke.
#pragma once

#include <simdup/reader.hpp>

#include "fuzz_memfile.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace simdup::fuzz {

struct parquet_read {
  std::vector<std::string> ids;  // of the records, in order ("#bad" for a bad record)
  read_status last = read_status::end;
  errc code = errc::internal;  // of the failure
};

inline std::string read_parquet_once(const std::string& path, const reader_options& options,
                                     parquet_read& out) {
  auto r = reader::open(std::vector<std::string>{path}, options);
  if (!r) return "open failed: " + r.error().message;
  document doc;
  error_info err;
  uint64_t last_row = 0, records = 0;
  for (int guard = 0; guard < 1'000'000; ++guard) {
    const read_status st = r->next(doc, err);
    if (st == read_status::record) {
      if (doc.id.empty()) return "a record without an id";
      if (doc.format != input_format::parquet) return "a record not marked Parquet";
      if (doc.line <= last_row) return "row numbers do not increase";
      last_row = doc.line;
      ++records;
      out.ids.push_back(doc.id);
      continue;
    }
    if (st == read_status::bad_record) {
      if (err.message.find(path) == std::string::npos) return "a bad record not naming the input";
      out.ids.emplace_back("#bad");
      continue;
    }
    out.last = st;
    out.code = err.code;
    if (st == read_status::failed) {
      if (err.message.find(path) == std::string::npos) return "a failure not naming the input";
      if (err.code != errc::corrupt_data && err.code != errc::invalid_input) {
        return "a failure with code " + std::string(errc_name(err.code));
      }
    }
    if (r->next(doc, err) != st) return "end or failed is not sticky";
    if (r->stats().records != records) return "stats().records disagrees";
    return {};
  }
  return "the reader does not end";
}

inline std::string check_parquet(std::string_view bytes) {
  if (bytes.empty()) return {};
  static mem_file file;
  const std::string& path = file.write(bytes.substr(1));
  reader_options options;
  options.format = input_format::parquet;
  options.max_record_bytes = 2048;
  if (bytes[0] & 1) {  // other names: a file without a column of that name fails whole
    options.fields.text = "body";
    options.fields.id = "key";
  }
  parquet_read a, b, skipped;
  if (std::string e = read_parquet_once(path, options, a); !e.empty()) return e;
  if (std::string e = read_parquet_once(path, options, b); !e.empty()) return e;
  if (a.ids != b.ids || a.last != b.last) return "two reads of the same bytes differ";
  options.skip_failed_inputs = true;
  if (std::string e = read_parquet_once(path, options, skipped); !e.empty()) return e;
  if (a.last == read_status::failed) a.ids.emplace_back("#bad");
  if (skipped.ids != a.ids || skipped.last != read_status::end) {
    return "skip_failed_inputs does not give the same records and one bad record";
  }
  return {};
}

}  // namespace simdup::fuzz
