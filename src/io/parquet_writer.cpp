// The dedup job's Parquet outputs. kept.parquet and annotated.parquet are the input rows
// themselves, so DuckDB reads the inputs again and writes the selected rows: a scalar function
// registered here (simdup_pick) answers, for each (file, row), whether the row is selected and
// where its decision is; further functions give the annotation columns. A filter and projection
// keep the scan's order (preserve_insertion_order, DuckDB's default), so rows stay in input
// order; every column passes through unchanged.
#include "io/parquet.hpp"

#if SIMDUP_WITH_PARQUET
#include "io/parquet_duckdb.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>
#include <unordered_map>
#endif

namespace simdup::detail {

#if !SIMDUP_WITH_PARQUET

struct parquet_rows::impl {};
parquet_rows::parquet_rows(bool /*annotated*/) {}
parquet_rows::~parquet_rows() = default;
parquet_rows::parquet_rows(parquet_rows&&) noexcept = default;
parquet_rows& parquet_rows::operator=(parquet_rows&&) noexcept = default;
void parquet_rows::add(const std::string& /*path*/, uint64_t /*row*/, const parquet_note*) {}
status parquet_rows::write(const std::filesystem::path& dest, const std::string&) const {
  return parquet_unsupported(dest.string());
}
status write_duplicates_parquet(const std::filesystem::path&, const std::filesystem::path& dest) {
  return parquet_unsupported(dest.filename().string());
}
result<std::vector<parquet_row_group>> parquet_row_groups(const std::string& path) {
  return parquet_unsupported(path);
}

#else

namespace {

/// Consecutive selected rows [begin, end).
struct row_run {
  uint64_t begin = 0, end = 0;
};

/// One annotated row's decision; the strings live in the input's arena and layer table.
struct note_row {
  uint64_t row = 0;
  uint64_t cluster = 0;
  double jaccard = 0;
  uint64_t duplicate_of_begin = 0;
  uint32_t duplicate_of_size = 0;
  int32_t distance = -1;
  uint8_t layer = 0;
  bool keep = false;
};

struct input_rows {
  std::string path;
  std::vector<row_run> runs;    // kept
  std::vector<note_row> notes;  // annotated
  std::string arena;            // the notes' duplicate_of ids
};

/// simdup_pick's answer for an unselected row.
constexpr int64_t kNotSelected = -1;
constexpr int kInputShift = 40;  // simdup_pick: input index << 40 | the note's position

}  // namespace

struct parquet_rows::impl {
  bool annotated = false;
  std::vector<input_rows> inputs;
  std::unordered_map<std::string, std::size_t> by_path;
  std::vector<std::string> layers;  // distinct layer names, by note_row::layer
  std::size_t last = SIZE_MAX;      // the input of the last add()

  /// simdup_pick for row `row` of input `in`: the position of its note (annotated) or 0
  /// (kept), or kNotSelected.
  int64_t pick(std::size_t in, uint64_t row) const {
    const input_rows& r = inputs[in];
    if (annotated) {
      const auto it = std::lower_bound(r.notes.begin(), r.notes.end(), row,
                                       [](const note_row& n, uint64_t v) { return n.row < v; });
      if (it == r.notes.end() || it->row != row) return kNotSelected;
      return static_cast<int64_t>(in) << kInputShift | (it - r.notes.begin());
    }
    const auto it = std::upper_bound(r.runs.begin(), r.runs.end(), row,
                                     [](uint64_t v, const row_run& x) { return v < x.begin; });
    if (it == r.runs.begin() || row >= std::prev(it)->end) return kNotSelected;
    return 0;
  }

  const note_row& note(int64_t handle) const {
    const auto in = static_cast<std::size_t>(handle >> kInputShift);
    return inputs[in].notes[static_cast<std::size_t>(handle & ((int64_t{1} << kInputShift) - 1))];
  }
  std::string_view duplicate_of(int64_t handle) const {
    const note_row& n = note(handle);
    const std::string& arena = inputs[static_cast<std::size_t>(handle >> kInputShift)].arena;
    return std::string_view(arena).substr(n.duplicate_of_begin, n.duplicate_of_size);
  }
};

parquet_rows::parquet_rows(bool annotated) : impl_(std::make_unique<impl>()) {
  impl_->annotated = annotated;
}
parquet_rows::~parquet_rows() = default;
parquet_rows::parquet_rows(parquet_rows&&) noexcept = default;
parquet_rows& parquet_rows::operator=(parquet_rows&&) noexcept = default;

void parquet_rows::add(const std::string& path, uint64_t row, const parquet_note* note) {
  impl& m = *impl_;
  if (m.last == SIZE_MAX || m.inputs[m.last].path != path) {
    auto [it, fresh] = m.by_path.try_emplace(path, m.inputs.size());
    if (fresh) m.inputs.push_back(input_rows{.path = path});
    m.last = it->second;
  }
  input_rows& in = m.inputs[m.last];
  if (!m.annotated) {
    if (!in.runs.empty() && in.runs.back().end == row) {
      ++in.runs.back().end;
    } else {
      in.runs.push_back({row, row + 1});
    }
    return;
  }
  note_row n{.row = row,
             .cluster = note->cluster,
             .jaccard = note->jaccard,
             .duplicate_of_begin = in.arena.size(),
             .duplicate_of_size = static_cast<uint32_t>(note->duplicate_of.size()),
             .distance = note->distance,
             .layer = 0,
             .keep = note->keep};
  in.arena.append(note->duplicate_of);
  auto layer = std::find(m.layers.begin(), m.layers.end(), note->layer);
  if (layer == m.layers.end()) layer = m.layers.insert(m.layers.end(), std::string(note->layer));
  n.layer = static_cast<uint8_t>(layer - m.layers.begin());
  in.notes.push_back(n);
}

namespace {

// ---- the scalar functions; DuckDB calls them from its worker threads, on a const impl ----

using fn_body = void (*)(const parquet_rows::impl&, duckdb_data_chunk, duckdb_vector);

template <class T>
T* chunk_column(duckdb_data_chunk chunk, idx_t c) {
  return static_cast<T*>(
      duck::duckdb_vector_get_data(duck::duckdb_data_chunk_get_vector(chunk, c)));
}

void set_null(duckdb_vector out, idx_t row) {
  duck::duckdb_vector_ensure_validity_writable(out);
  duck::duckdb_validity_set_row_invalid(duck::duckdb_vector_get_validity(out), row);
}

void pick_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  auto* names = chunk_column<duckdb_string_t>(in, 0);
  auto* rows = chunk_column<int64_t>(in, 1);
  auto* result = static_cast<int64_t*>(duck::duckdb_vector_get_data(out));
  std::string_view last_name;
  std::size_t last_input = SIZE_MAX;
  for (idx_t i = 0; i < duck::duckdb_data_chunk_get_size(in); ++i) {
    const std::string_view name(duck::duckdb_string_t_data(&names[i]),
                                duck::duckdb_string_t_length(names[i]));
    if (last_input == SIZE_MAX || name != last_name) {
      const auto it = m.by_path.find(std::string(name));
      last_input = it == m.by_path.end() ? SIZE_MAX - 1 : it->second;
      last_name = name;
    }
    result[i] = last_input == SIZE_MAX - 1 ? kNotSelected
                                           : m.pick(last_input, static_cast<uint64_t>(rows[i]));
  }
}

template <class F>
void for_each_handle(duckdb_data_chunk in, F f) {
  auto* handles = chunk_column<int64_t>(in, 0);
  for (idx_t i = 0; i < duck::duckdb_data_chunk_get_size(in); ++i) f(i, handles[i]);
}

void keep_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  auto* r = static_cast<bool*>(duck::duckdb_vector_get_data(out));
  for_each_handle(in, [&](idx_t i, int64_t h) { r[i] = m.note(h).keep; });
}
void cluster_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  auto* r = static_cast<uint64_t*>(duck::duckdb_vector_get_data(out));
  for_each_handle(in, [&](idx_t i, int64_t h) { r[i] = m.note(h).cluster; });
}
void duplicate_of_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  for_each_handle(in, [&](idx_t i, int64_t h) {
    if (m.note(h).keep) return set_null(out, i);
    const std::string_view id = m.duplicate_of(h);
    duck::duckdb_vector_assign_string_element_len(out, i, id.data(), id.size());
  });
}
void distance_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  auto* r = static_cast<int32_t*>(duck::duckdb_vector_get_data(out));
  for_each_handle(in, [&](idx_t i, int64_t h) {
    const note_row& n = m.note(h);
    if (n.keep || n.distance < 0) return set_null(out, i);
    r[i] = n.distance;
  });
}
void layer_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  for_each_handle(in, [&](idx_t i, int64_t h) {
    const std::string& layer = m.layers[m.note(h).layer];
    duck::duckdb_vector_assign_string_element_len(out, i, layer.data(), layer.size());
  });
}
void jaccard_body(const parquet_rows::impl& m, duckdb_data_chunk in, duckdb_vector out) {
  auto* r = static_cast<double*>(duck::duckdb_vector_get_data(out));
  for_each_handle(in, [&](idx_t i, int64_t h) {
    const note_row& n = m.note(h);
    if (n.keep || std::isnan(n.jaccard)) return set_null(out, i);
    r[i] = n.jaccard;
  });
}

template <fn_body Body>
void trampoline(duckdb_function_info info, duckdb_data_chunk in, duckdb_vector out) {
  Body(*static_cast<const parquet_rows::impl*>(duck::duckdb_scalar_function_get_extra_info(info)),
       in, out);
}

struct function_spec {
  const char* name;
  std::initializer_list<duckdb_type> params;
  duckdb_type returns;
  duckdb_scalar_function_t body;
};

status register_functions(const duck::connection& con, const parquet_rows::impl& m) {
  const function_spec specs[] = {
      {"simdup_pick",
       {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_BIGINT},
       DUCKDB_TYPE_BIGINT,
       trampoline<pick_body>},
      {"simdup_note_keep", {DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_BOOLEAN, trampoline<keep_body>},
      {"simdup_note_cluster", {DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_UBIGINT, trampoline<cluster_body>},
      {"simdup_note_duplicate_of",
       {DUCKDB_TYPE_BIGINT},
       DUCKDB_TYPE_VARCHAR,
       trampoline<duplicate_of_body>},
      {"simdup_note_distance",
       {DUCKDB_TYPE_BIGINT},
       DUCKDB_TYPE_INTEGER,
       trampoline<distance_body>},
      {"simdup_note_layer", {DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_VARCHAR, trampoline<layer_body>},
      {"simdup_note_jaccard", {DUCKDB_TYPE_BIGINT}, DUCKDB_TYPE_DOUBLE, trampoline<jaccard_body>},
  };
  for (const function_spec& spec : specs) {
    duckdb_scalar_function f = duck::duckdb_create_scalar_function();
    duck::duckdb_scalar_function_set_name(f, spec.name);
    for (duckdb_type t : spec.params) {
      duckdb_logical_type lt = duck::duckdb_create_logical_type(t);
      duck::duckdb_scalar_function_add_parameter(f, lt);
      duck::duckdb_destroy_logical_type(&lt);
    }
    duckdb_logical_type rt = duck::duckdb_create_logical_type(spec.returns);
    duck::duckdb_scalar_function_set_return_type(f, rt);
    duck::duckdb_destroy_logical_type(&rt);
    duck::duckdb_scalar_function_set_function(f, spec.body);
    duck::duckdb_scalar_function_set_extra_info(f, const_cast<parquet_rows::impl*>(&m), nullptr);
    const duckdb_state st = duck::duckdb_register_scalar_function(con.get(), f);
    duck::duckdb_destroy_scalar_function(&f);
    if (st == DuckDBError) {
      return make_error(errc::internal, std::string("DuckDB: cannot register ") + spec.name);
    }
  }
  return {};
}

/// read_parquet over `paths` with the file name and row number of every row.
std::string scan_of(const std::vector<std::string>& paths) {
  std::string list;
  for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + duck::literal(p);
  return "read_parquet([" + list + "], filename = 'simdup_file', file_row_number = true" +
         (paths.size() > 1 ? ", union_by_name = true" : "") + ")";
}

error_info write_error(const std::filesystem::path& dest, const error_info& e) {
  const bool full = e.message.find("No space left") != std::string::npos;
  return make_error(full ? errc::no_space : errc::io_error,
                    dest.string() + ": cannot write it: " + e.message);
}

/// Runs `copy` (a COPY ... TO dest) with DuckDB's spill files beside dest, removed after.
status run_copy(duck::connection& con, const std::filesystem::path& dest, const std::string& copy) {
  const std::filesystem::path spill = dest.parent_path() / ".duckdb-spill";
  auto st = con.run("SET temp_directory = " + duck::literal(spill.string()));
  if (st) st = con.run(copy);
  std::error_code ec;
  std::filesystem::remove_all(spill, ec);
  if (!st) return write_error(dest, st.error());
  return {};
}

// One DuckDB thread: more spent more CPU waiting on each other than they saved in wall time
// on the outputs measured (docs/performance.md).
constexpr unsigned kWriterThreads = 1;

// Snappy: the codec every Parquet reader reads (DuckDB's default too).
constexpr const char* kParquetOptions = " (FORMAT parquet, COMPRESSION snappy)";

}  // namespace

status parquet_rows::write(const std::filesystem::path& dest,
                           const std::string& schema_from) const {
  const impl& m = *impl_;
  auto con = duck::connection::open(kWriterThreads);
  if (!con) return std::move(con).error();
  if (auto st = register_functions(*con, m); !st) return st;
  std::vector<std::string> paths;
  for (const input_rows& in : m.inputs) paths.push_back(in.path);
  const bool no_rows = paths.empty();
  if (no_rows && !schema_from.empty()) paths.push_back(schema_from);
  if (paths.empty()) {
    // Nothing to take a schema from (every input failed): an empty file all the same.
    return run_copy(*con, dest,
                    "COPY (SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS text WHERE false) TO " +
                        duck::literal(dest.string()) + kParquetOptions);
  }
  const std::string rows =
      "SELECT * EXCLUDE (simdup_file, file_row_number), "
      "simdup_pick(simdup_file, file_row_number) AS simdup_handle FROM " +
      scan_of(paths);
  std::string select = "SELECT * EXCLUDE (simdup_handle)";
  if (m.annotated) {
    for (const char* c : {"keep", "cluster", "duplicate_of", "distance", "layer", "jaccard"}) {
      select += std::string(", simdup_note_") + c + "(simdup_handle) AS simdup_" + c;
    }
  }
  select += " FROM (" + rows + ") WHERE " + (no_rows ? "false" : "simdup_handle >= 0");
  return run_copy(*con, dest,
                  "COPY (" + select + ") TO " + duck::literal(dest.string()) + kParquetOptions);
}

status write_duplicates_parquet(const std::filesystem::path& jsonl,
                                const std::filesystem::path& dest) {
  auto con = duck::connection::open(kWriterThreads);
  if (!con) return std::move(con).error();
  // Every column named, so an empty duplicates.jsonl gives an empty file of the same schema.
  const std::string scan =
      "read_json(" + duck::literal(jsonl.string()) +
      ", format = 'newline_delimited', columns = {id: 'VARCHAR', duplicate_of: 'VARCHAR', "
      "cluster: 'UBIGINT', distance: 'INTEGER', layer: 'VARCHAR', jaccard: 'DOUBLE'})";
  return run_copy(
      *con, dest,
      "COPY (SELECT * FROM " + scan + ") TO " + duck::literal(dest.string()) + kParquetOptions);
}

result<std::vector<parquet_row_group>> parquet_row_groups(const std::string& path) {
  auto con = duck::connection::open(1);
  if (!con) return std::move(con).error();
  auto st = duck::statement::prepare(
      *con, "SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(" +
                duck::literal(path) + ") ORDER BY row_group_id");
  if (!st)
    return make_error(errc::corrupt_data,
                      path + ": not a readable Parquet file: " + st.error().message);
  auto s = duck::stream::execute(*st);
  if (!s)
    return make_error(errc::corrupt_data,
                      path + ": not a readable Parquet file: " + s.error().message);
  std::vector<parquet_row_group> groups;
  uint64_t first = 0;
  while (duckdb_data_chunk chunk = s->next()) {
    auto* rows = chunk_column<int64_t>(chunk, 1);
    for (idx_t i = 0; i < duck::duckdb_data_chunk_get_size(chunk); ++i) {
      groups.push_back({first, static_cast<uint64_t>(rows[i])});
      first += static_cast<uint64_t>(rows[i]);
    }
  }
  if (std::string e = s->error(); !e.empty()) {
    return make_error(errc::corrupt_data, path + ": not a readable Parquet file: " + e);
  }
  return groups;
}

#endif  // SIMDUP_WITH_PARQUET

}  // namespace simdup::detail
