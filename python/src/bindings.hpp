// Shared pieces of the simdup._core module: error translation, keyword options, texts from
// Python objects, and a small parallel loop. The module sees only include/simdup.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/reader.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::python {

namespace py = pybind11;

/// Raises the Python exception for a library error (the GIL must be held): an error about a
/// setting (error_info::parameter) is simdup.errors.ParameterError, a ValueError with the
/// setting's fields; else not_found is FileNotFoundError, io_error and unavailable OSError,
/// internal RuntimeError, the rest ValueError; the message is the library's.
[[noreturn]] void raise_error(const error_info& error);

/// Returns the value of a result or raises its error (GIL held).
template <class T>
T take(result<T>&& r) {
  if (!r) raise_error(r.error());
  return std::move(r).value();
}
inline void check(const status& s) {
  if (!s) raise_error(s.error());
}

/// Reads keyword options from a dict, by name, with type and range checks; finish() rejects
/// names nobody asked for (TypeError naming them), so a typo never passes silently.
class option_reader {
 public:
  explicit option_reader(py::dict options) : options_(std::move(options)) {}

  std::optional<bool> flag(const char* name);
  std::optional<long long> integer(const char* name, long long min, long long max);
  std::optional<double> number(const char* name);
  std::optional<std::string> text(const char* name);
  /// A str, or an iterable of str (a single str is one entry).
  std::optional<std::vector<std::string>> texts(const char* name);
  /// One of `choices` (case-sensitive; '_' and '-' are interchangeable); ValueError otherwise.
  std::optional<std::string> choice(const char* name, std::initializer_list<const char*> choices);
  /// TypeError for any option that was given but not read.
  void finish(const char* what);

 private:
  py::object get(const char* name);
  py::dict options_;
  std::vector<std::string> read_;
};

/// Fingerprint options under the CLI's flag names (html, no_nfkc, no_casefold, no_t2s,
/// keep_punctuation, strip_digits, features, shingle_width, ngram, min_token_length,
/// jieba_dict, user_dict, weighting, idf, stopwords, top_k, hash, compat, min_features).
/// `defaults` supplies values for options not given (the dedup command's min_features).
fingerprint_options read_fingerprint_options(option_reader& options,
                                             fingerprint_options defaults = {});

/// UTF-8 views of a sequence of str/bytes, valid while this object lives. Strings with lone
/// surrogates are encoded with "surrogatepass" (the library then sees invalid UTF-8, which it
/// repairs and counts); None and other types are TypeError naming the position.
class text_views {
 public:
  explicit text_views(py::handle texts, const char* what = "texts");
  const std::vector<std::string_view>& views() const noexcept { return views_; }
  std::size_t size() const noexcept { return views_.size(); }

 private:
  py::object sequence_;              // keeps the str objects (and their UTF-8 caches) alive
  std::vector<py::object> encoded_;  // bytes made for surrogates and bytearrays
  std::vector<std::string_view> views_;
};

/// The UTF-8 of one str/bytes object (TypeError for anything else); `storage` holds the
/// bytes when an encoding had to be made.
std::string_view utf8_of(py::handle text, py::object& storage, const char* what);

/// Worker threads for `threads` (0: all cores), at most one per `work_items / min_per_thread`.
unsigned worker_count(unsigned threads, std::size_t work_items, std::size_t min_per_thread);

/// Runs body(begin, end) over [0, n) in blocks of `block` items on `workers` threads (the
/// caller's included). Call without the GIL.
void parallel_for(std::size_t n, unsigned workers, std::size_t block,
                  const std::function<void(std::size_t, std::size_t)>& body);

/// A contiguous uint64 array view of any array-like (zero-copy for C-contiguous uint64).
using u64_array = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>;
using i64_array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

/// The options of simdup.dedup (the CLI's names and defaults: k 8, anchored clusters, MinHash
/// 10x6, verify jaccard:0.8, min_features 10). `from_memory`: records given as JSONL bytes.
struct dedup_settings {
  reader_options reader;
  dedup_options dedup;  ///< with its detection profile
  std::string keep_spec = "first";
  bool skip_bad_records = false;
  unsigned threads = 0;
};
/// `what` names the caller in the unknown-option error ("dedup", "explain").
dedup_settings read_dedup_settings(py::dict options, bool from_memory, const char* what = "dedup");

/// Opens the indexes of earlier runs (`against`) into s.dedup and checks each against the run's
/// profile; ValueError (or the open's error) otherwise. `cached`: reuse an index this process
/// opened before, while its manifest is unchanged.
void open_against(dedup_settings& s, const std::vector<std::string>& paths, bool only, bool cached);

/// A record id as Python sees it: JSON numbers as int (or float), the rest as str.
py::object id_object(const std::string& id, bool is_number);

void bind_fingerprint(py::module_& m);
void bind_index(py::module_& m);
void bind_dedup(py::module_& m);
/// simdup.dask's per-partition steps (dask_partitions.cpp, dask_pairs.cpp, dask_components.cpp).
void bind_dask_partitions(py::module_& m);
void bind_dask_pairs(py::module_& m);
void bind_dask_components(py::module_& m);

}  // namespace simdup::python
