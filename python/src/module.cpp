// simdup._core: the pybind11 module. The idiomatic API (names, defaults, docstrings) lives in
// the pure-Python package simdup; this module only wires the library's public API.
#include "bindings.hpp"

#include <simdup/pipeline.hpp>

#include <Python.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace simdup::python {

void raise_error(const error_info& error) {
  if (error.parameter) {
    // simdup.errors.ParameterError (a ValueError) carries the setting as attributes.
    const parameter_info& p = *error.parameter;
    py::object type = py::module_::import("simdup.errors").attr("ParameterError");
    py::object exception = type(error.message, py::arg("parameter") = p.name,
                                py::arg("value") = p.value, py::arg("allowed") = p.allowed,
                                py::arg("reason") = p.reason, py::arg("needs") = p.needs);
    PyErr_SetObject(type.ptr(), exception.ptr());
    throw py::error_already_set();
  }
  PyObject* type = PyExc_ValueError;
  switch (error.code) {
    case errc::not_found:
      type = PyExc_FileNotFoundError;
      break;
    case errc::io_error:
    case errc::no_space:
    case errc::unavailable:
      type = PyExc_OSError;
      break;
    case errc::internal:
      type = PyExc_RuntimeError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, error.message.c_str());
  throw py::error_already_set();
}

py::object option_reader::get(const char* name) {
  read_.emplace_back(name);
  if (!options_.contains(name)) return py::none();
  return options_[name];
}

std::optional<bool> option_reader::flag(const char* name) {
  py::object v = get(name);
  if (v.is_none()) return std::nullopt;
  if (!PyBool_Check(v.ptr()) && !PyLong_Check(v.ptr())) {
    throw py::type_error(std::string(name) + " must be a bool, not " +
                         std::string(py::str(v.get_type().attr("__name__"))));
  }
  return PyObject_IsTrue(v.ptr()) == 1;
}

std::optional<long long> option_reader::integer(const char* name, long long min, long long max) {
  py::object v = get(name);
  if (v.is_none()) return std::nullopt;
  if (PyBool_Check(v.ptr()) || !PyLong_Check(v.ptr())) {
    // numpy integers are accepted through __index__.
    if (!PyIndex_Check(v.ptr()) || PyBool_Check(v.ptr())) {
      throw py::type_error(std::string(name) + " must be an int, not " +
                           std::string(py::str(v.get_type().attr("__name__"))));
    }
  }
  int overflow = 0;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!index) throw py::error_already_set();
  const long long x = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || x < min || x > max) {
    const std::string allowed = std::to_string(min) + ".." + std::to_string(max);
    const std::string value = py::str(v);
    raise_error(invalid_parameter({.name = name,
                                   .value = value,
                                   .allowed = allowed,
                                   .reason = "must be in " + allowed + ", got " + value}));
  }
  return x;
}

std::optional<double> option_reader::number(const char* name) {
  py::object v = get(name);
  if (v.is_none()) return std::nullopt;
  if (PyBool_Check(v.ptr()) || !(PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()))) {
    throw py::type_error(std::string(name) + " must be a number, not " +
                         std::string(py::str(v.get_type().attr("__name__"))));
  }
  return v.cast<double>();
}

std::optional<std::string> option_reader::text(const char* name) {
  py::object v = get(name);
  if (v.is_none()) return std::nullopt;
  // Paths (os.PathLike) are accepted wherever a str is.
  if (!PyUnicode_Check(v.ptr()) && py::hasattr(v, "__fspath__")) v = v.attr("__fspath__")();
  if (!PyUnicode_Check(v.ptr())) {
    throw py::type_error(std::string(name) + " must be a str, not " +
                         std::string(py::str(v.get_type().attr("__name__"))));
  }
  return v.cast<std::string>();
}

std::optional<std::vector<std::string>> option_reader::texts(const char* name) {
  py::object v = get(name);
  if (v.is_none()) return std::nullopt;
  std::vector<std::string> out;
  const auto one = [&](py::handle item) {
    py::object s = py::reinterpret_borrow<py::object>(item);
    if (!PyUnicode_Check(s.ptr()) && py::hasattr(s, "__fspath__")) s = s.attr("__fspath__")();
    if (!PyUnicode_Check(s.ptr())) {
      throw py::type_error(std::string(name) + " must be a str or a list of str");
    }
    out.push_back(s.cast<std::string>());
  };
  if (PyUnicode_Check(v.ptr()) || py::hasattr(v, "__fspath__")) {
    one(v);
  } else {
    if (!py::isinstance<py::iterable>(v)) {
      throw py::type_error(std::string(name) + " must be a str or a list of str");
    }
    for (py::handle item : v) one(item);
  }
  return out;
}

std::optional<std::string> option_reader::choice(const char* name,
                                                 std::initializer_list<const char*> choices) {
  auto v = text(name);
  if (!v) return std::nullopt;
  std::string s = *v;
  std::replace(s.begin(), s.end(), '_', '-');
  std::string list;
  for (const char* c : choices) {
    std::string dashed = c;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    if (s == dashed) return std::string(c);
    list += list.empty() ? "" : ", ";
    list += c;
  }
  raise_error(invalid_parameter({.name = name,
                                 .value = *v,
                                 .allowed = list,
                                 .reason = ": unknown value '" + *v + "' (" + list + ")"}));
}

void option_reader::finish(const char* what) {
  std::string unknown;
  for (auto item : options_) {
    const std::string key = py::str(item.first);
    if (std::find(read_.begin(), read_.end(), key) == read_.end()) {
      unknown += unknown.empty() ? "" : ", ";
      unknown += "'" + key + "'";
    }
  }
  if (!unknown.empty()) throw py::type_error(std::string(what) + ": unknown option " + unknown);
}

fingerprint_options read_fingerprint_options(option_reader& r, fingerprint_options o) {
  if (auto v = r.flag("html")) o.normalize.html = *v;
  if (auto v = r.flag("no_nfkc")) o.normalize.nfkc = !*v;
  if (auto v = r.flag("no_casefold")) o.normalize.casefold = !*v;
  if (auto v = r.flag("no_t2s")) o.normalize.t2s = !*v;
  if (auto v = r.flag("keep_punctuation")) o.normalize.strip_punctuation = !*v;
  if (auto v = r.flag("strip_digits")) o.normalize.strip_digits = *v;
  if (auto v = r.choice("features", {"shingles", "words", "word-ngrams", "jieba", "keywords"})) {
    if (*v == "shingles") o.features.kind = feature_kind::shingles;
    if (*v == "words") o.features.kind = feature_kind::words;
    if (*v == "word-ngrams") o.features.kind = feature_kind::word_ngrams;
    if (*v == "jieba") o.features.kind = feature_kind::jieba;
    if (*v == "keywords") o.features.kind = feature_kind::keywords;
  }
  // The CLI's ranges (CLI11 checks them there).
  if (auto v = r.integer("shingle_width", 1, 1024)) o.features.shingle_width = *v;
  if (auto v = r.integer("ngram", 1, 64)) o.features.ngram = *v;
  if (auto v = r.integer("min_token_length", 0, 1 << 30)) o.features.min_token_length = *v;
  if (auto v = r.text("jieba_dict")) o.features.jieba_dict = *v;
  if (auto v = r.texts("user_dict")) o.features.jieba_user_dicts = *v;
  if (auto v = r.choice("weighting", {"count", "binary", "tfidf"})) {
    if (*v == "count") o.weighting.scheme = weighting_scheme::count;
    if (*v == "binary") o.weighting.scheme = weighting_scheme::binary;
    if (*v == "tfidf") o.weighting.scheme = weighting_scheme::tfidf;
  }
  if (auto v = r.text("idf")) o.weighting.idf_path = *v;
  if (auto v = r.text("stopwords")) o.weighting.stopwords_path = *v;
  if (auto v = r.integer("top_k", 0, 1LL << 40)) o.weighting.top_k = *v;
  if (auto v = r.choice("hash", {"xxh3", "fnv1a", "md5"})) {
    if (*v == "xxh3") o.hash = hash_kind::xxh3;
    if (*v == "fnv1a") o.hash = hash_kind::fnv1a;
    if (*v == "md5") o.hash = hash_kind::md5;
  }
  if (auto v = r.choice("compat", {"none", "python-simhash", "jieba-tfidf"})) {
    o.compat = *v == "python-simhash" ? compat_mode::python_simhash
               : *v == "jieba-tfidf"  ? compat_mode::jieba_tfidf
                                      : compat_mode::none;
  }
  if (auto v = r.integer("min_features", 1, 1 << 30)) o.min_features = *v;
  if (o.weighting.scheme == weighting_scheme::tfidf && o.weighting.idf_path.empty()) {
    raise_error(error_info{
        errc::invalid_argument, "weighting='tfidf' needs idf=FILE",
        parameter_info{.name = "weighting", .value = "tfidf", .reason = "needs", .needs = "idf"}});
  }
  return o;
}

std::string_view utf8_of(py::handle text, py::object& storage, const char* what) {
  PyObject* p = text.ptr();
  if (PyUnicode_Check(p)) {
    Py_ssize_t n = 0;
    if (const char* s = PyUnicode_AsUTF8AndSize(p, &n)) return {s, static_cast<std::size_t>(n)};
    // Lone surrogates have no UTF-8 form; pass them as the (invalid) bytes surrogatepass makes.
    PyErr_Clear();
    storage =
        py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(p, "utf-8", "surrogatepass"));
    if (!storage) throw py::error_already_set();
    return {PyBytes_AS_STRING(storage.ptr()),
            static_cast<std::size_t>(PyBytes_GET_SIZE(storage.ptr()))};
  }
  if (PyBytes_Check(p)) {
    return {PyBytes_AS_STRING(p), static_cast<std::size_t>(PyBytes_GET_SIZE(p))};
  }
  if (PyByteArray_Check(p) || PyMemoryView_Check(p)) {
    storage = py::reinterpret_steal<py::object>(PyBytes_FromObject(p));
    if (!storage) throw py::error_already_set();
    return {PyBytes_AS_STRING(storage.ptr()),
            static_cast<std::size_t>(PyBytes_GET_SIZE(storage.ptr()))};
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       std::string(py::str(text.get_type().attr("__name__"))));
}

text_views::text_views(py::handle texts, const char* what) {
  if (PyUnicode_Check(texts.ptr()) || PyBytes_Check(texts.ptr())) {
    throw py::type_error(std::string(what) +
                         " must be an iterable of str (a list, a numpy array, a pandas Series), "
                         "not a single str; wrap it in a list");
  }
  PyObject* seq = PySequence_Fast(texts.ptr(), "");
  if (seq == nullptr) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + " must be an iterable of str, not " +
                         std::string(py::str(texts.get_type().attr("__name__"))));
  }
  sequence_ = py::reinterpret_steal<py::object>(seq);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  views_.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    if (item == Py_None) {
      throw py::type_error(std::string(what) + "[" + std::to_string(i) +
                           "] is None: expected str or bytes");
    }
    if (!PyUnicode_Check(item) && !PyBytes_Check(item) && !PyByteArray_Check(item)) {
      throw py::type_error(std::string(what) + "[" + std::to_string(i) +
                           "] must be str or bytes, not " +
                           std::string(py::str(py::handle(item).get_type().attr("__name__"))));
    }
    py::object storage;
    views_.push_back(utf8_of(item, storage, what));
    if (storage) encoded_.push_back(std::move(storage));
  }
}

unsigned worker_count(unsigned threads, std::size_t work_items, std::size_t min_per_thread) {
  const unsigned n = simdup::pipeline_threads(threads);
  const std::size_t useful =
      std::max<std::size_t>(1, work_items / std::max<std::size_t>(1, min_per_thread));
  return static_cast<unsigned>(std::min<std::size_t>(n, useful));
}

void parallel_for(std::size_t n, unsigned workers, std::size_t block,
                  const std::function<void(std::size_t, std::size_t)>& body) {
  if (workers <= 1 || n <= block) {
    if (n > 0) body(0, n);
    return;
  }
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (;;) {
      const std::size_t begin = next.fetch_add(block);
      if (begin >= n) return;
      body(begin, std::min(n, begin + block));
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned i = 1; i < workers; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace simdup::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "simdup's C++ core; use the `simdup` package, which documents every call.";
  m.attr("__version__") = SIMDUP_VERSION;
  simdup::python::bind_fingerprint(m);
  simdup::python::bind_index(m);
  simdup::python::bind_dedup(m);
  simdup::python::bind_dask_partitions(m);
  simdup::python::bind_dask_pairs(m);
  simdup::python::bind_dask_components(m);
}
