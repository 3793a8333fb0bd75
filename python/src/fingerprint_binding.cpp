// Fingerprints, distances, all pairs, clusters, plans and jieba segmentation for Python.
#include "bindings.hpp"

#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/detection.hpp>
#include <simdup/jieba.hpp>
#include <simdup/plan.hpp>
#include <simdup/simhash.hpp>

#include <algorithm>
#include <bit>
#include <memory>

namespace simdup::python {
namespace {

/// Status codes in the status arrays (simdup.OK, simdup.TOO_SHORT).
uint8_t status_code(fingerprint_status s) {
  return s == fingerprint_status::ok ? 0 : 1;
}

class py_fingerprinter {
 public:
  explicit py_fingerprinter(py::dict options) {
    option_reader r(std::move(options));
    const fingerprint_options o = read_fingerprint_options(r);
    r.finish("Fingerprinter");
    result<fingerprinter> created = make_error(errc::internal, "not created");
    {
      py::gil_scoped_release nogil;  // dictionaries and IDF files load here
      created = fingerprinter::create(o);
    }
    fp_ = std::make_shared<fingerprinter>(take(std::move(created)));
  }

  py::tuple fingerprint(py::handle texts, unsigned threads) const {
    const text_views views(texts);
    const std::size_t n = views.size();
    py::array_t<uint64_t> values(static_cast<py::ssize_t>(n));
    py::array_t<uint8_t> status(static_cast<py::ssize_t>(n));
    uint64_t* v = values.mutable_data();
    uint8_t* s = status.mutable_data();
    const bool compat_value = fp_->options().compat == compat_mode::python_simhash;
    {
      py::gil_scoped_release nogil;
      const auto& texts_utf8 = views.views();
      parallel_for(n, worker_count(threads, n, 256), 256, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const fingerprint_result r = fp_->fingerprint(texts_utf8[i]);
          // Without features there is no fingerprint (0), except in python-simhash mode, which
          // keeps the package's value beside the status, as the CLI prints it.
          v[i] = r.status == fingerprint_status::ok || compat_value ? r.fingerprint : 0;
          s[i] = status_code(r.status);
        }
      });
    }
    return py::make_tuple(std::move(values), std::move(status));
  }

  /// One text: (value, status). The per-object path of simdup.compat.Simhash.
  py::tuple fingerprint_one(py::handle text) const {
    py::object storage;
    const std::string_view utf8 = utf8_of(text, storage, "text");
    fingerprint_result r;
    if (utf8.size() > (1u << 16)) {
      py::gil_scoped_release nogil;
      r = fp_->fingerprint(utf8);
    } else {
      r = fp_->fingerprint(utf8);  // microseconds: releasing the GIL would cost more
    }
    return py::make_tuple(r.fingerprint, status_code(r.status));
  }

  /// Supplied (feature, weight) pairs: (value, status).
  py::tuple fingerprint_features(py::handle features) const {
    std::vector<weighted_feature> list;
    for (py::handle item : features) {
      if (!PyTuple_Check(item.ptr()) || PyTuple_GET_SIZE(item.ptr()) != 2) {
        throw py::type_error("features must be (str, weight) tuples");
      }
      py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
      // Strict, like the package's f.encode('utf-8'): a lone surrogate is UnicodeEncodeError.
      if (!PyUnicode_Check(pair[0].ptr())) throw py::type_error("features must be str");
      Py_ssize_t size = 0;
      const char* text = PyUnicode_AsUTF8AndSize(pair[0].ptr(), &size);
      if (text == nullptr) throw py::error_already_set();
      list.push_back({std::string(text, static_cast<std::size_t>(size)), pair[1].cast<double>()});
    }
    fingerprint_result r;
    {
      py::gil_scoped_release nogil;
      r = fp_->fingerprint_features(list);
    }
    return py::make_tuple(r.fingerprint, status_code(r.status));
  }

  std::vector<std::pair<std::string, double>> features(py::handle text) const {
    py::object storage;
    const std::string_view utf8 = utf8_of(text, storage, "text");
    std::vector<weighted_feature> fs;
    {
      py::gil_scoped_release nogil;
      fs = fp_->features(utf8);
    }
    std::vector<std::pair<std::string, double>> out;
    out.reserve(fs.size());
    for (auto& f : fs) out.emplace_back(std::move(f.text), f.weight);
    return out;
  }

 private:
  std::shared_ptr<const fingerprinter> fp_;
};

py::array_t<uint8_t> distance(const u64_array& a, const u64_array& b) {
  if (a.size() != b.size()) throw py::value_error("distance: arrays of different sizes");
  const auto n = static_cast<std::size_t>(a.size());
  py::array_t<uint8_t> out(static_cast<py::ssize_t>(n));
  const uint64_t* x = a.data();
  const uint64_t* y = b.data();
  uint8_t* d = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(std::popcount(x[i] ^ y[i]));
  }
  return out;
}

all_pairs_options pairs_options(const detection_profile& profile, uint64_t memory,
                                unsigned threads) {
  check(profile.validate());
  all_pairs_options o = profile.pair_search();
  o.memory = memory;
  o.threads = threads;
  return o;
}

/// Every pair within k: (a, b, distance) arrays, sorted by (a, b).
py::tuple pairs(const u64_array& fps, int k, uint64_t memory, unsigned threads) {
  const all_pairs_options o = pairs_options(
      detection_profile::for_fingerprints(k, cluster_linking::components), memory, threads);
  std::vector<index_pair> found;
  result<all_pairs_stats> run = make_error(errc::internal, "not run");
  {
    py::gil_scoped_release nogil;
    run = all_pairs(std::span(fps.data(), static_cast<std::size_t>(fps.size())), o,
                    [&](std::span<const index_pair> batch) {
                      found.insert(found.end(), batch.begin(), batch.end());
                      return true;
                    });
    std::sort(found.begin(), found.end(), [](const index_pair& x, const index_pair& y) {
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    });
  }
  take(std::move(run));
  const auto n = static_cast<py::ssize_t>(found.size());
  py::array_t<uint32_t> a(n), b(n);
  py::array_t<uint8_t> d(n);
  uint32_t* pa = a.mutable_data();
  uint32_t* pb = b.mutable_data();
  uint8_t* pd = d.mutable_data();
  for (std::size_t i = 0; i < found.size(); ++i) {
    pa[i] = found[i].a;
    pb[i] = found[i].b;
    pd[i] = static_cast<uint8_t>(found[i].distance);
  }
  return py::make_tuple(std::move(a), std::move(b), std::move(d));
}

/// The representative ordinal of each fingerprint's cluster.
py::array_t<uint32_t> clusters(const u64_array& fps, int k, const std::string& mode,
                               uint64_t memory, unsigned threads) {
  if (mode != "components" && mode != "star" && mode != "centers") {
    raise_error(invalid_parameter(
        {.name = "mode",
         .value = mode,
         .allowed = "components, star, centers",
         .reason = ": unknown value '" + mode + "' (components, star, centers)"}));
  }
  const detection_profile profile =
      detection_profile::for_fingerprints(k, take(parse_linking(mode)));
  const all_pairs_options o = pairs_options(profile, memory, threads);
  const auto n = static_cast<std::size_t>(fps.size());
  std::vector<uint32_t> rep;
  result<all_pairs_stats> run = make_error(errc::internal, "not run");
  {
    py::gil_scoped_release nogil;
    cluster_builder builder(n, profile.clustering);
    run = all_pairs(std::span(fps.data(), n), o, [&](std::span<const index_pair> batch) {
      builder.add(batch);
      return true;
    });
    if (run) rep = builder.finish();
  }
  take(std::move(run));
  py::array_t<uint32_t> out(static_cast<py::ssize_t>(n));
  std::copy(rep.begin(), rep.end(), out.mutable_data());
  return out;
}

py::dict plan_dict(const index_plan& p) {
  py::dict d;
  d["layout"] = p.layout.describe();
  d["k"] = p.layout.k;
  d["purpose"] = p.purpose == plan_purpose::batch ? "batch" : "online";
  d["n"] = p.n;
  d["tables"] = p.tables;
  d["min_prefix_bits"] = p.min_prefix_bits;
  d["max_prefix_bits"] = p.max_prefix_bits;
  d["candidates_per_probe"] = p.candidates_per_probe;
  d["bytes_per_entry"] = p.bytes_per_entry;
  d["cost"] = p.cost;
  d["description"] = p.describe();
  return d;
}

py::dict plan(uint64_t n, int k, uint64_t memory, const std::string& purpose,
              const std::string& blocks) {
  if (purpose != "batch" && purpose != "online") {
    raise_error(invalid_parameter({.name = "purpose",
                                   .value = purpose,
                                   .allowed = "batch, online",
                                   .reason = ": unknown value '" + purpose + "' (batch, online)"}));
  }
  const plan_purpose pp = purpose == "batch" ? plan_purpose::batch : plan_purpose::online;
  if (!blocks.empty()) {
    const index_layout layout = take(index_layout::parse(k, blocks));
    return plan_dict(take(evaluate_layout(layout, n, pp)));
  }
  return plan_dict(take(make_plan({.n = n, .k = k, .memory = memory, .purpose = pp})));
}

class py_segmenter {
 public:
  py_segmenter(const std::string& dict, const std::vector<std::string>& user_dicts, bool hmm) {
    jieba_options o;
    o.dict = dict;
    o.user_dicts = user_dicts;
    o.hmm = hmm;
    result<std::shared_ptr<const jieba_segmenter>> created =
        make_error(errc::internal, "not created");
    {
      py::gil_scoped_release nogil;
      created = jieba_segmenter::create(o);
    }
    seg_ = take(std::move(created));
  }

  py::list segment(py::handle text) const {
    py::object storage;
    const std::string_view utf8 = utf8_of(text, storage, "text");
    std::vector<std::string_view> words;
    {
      py::gil_scoped_release nogil;
      seg_->segment(utf8, words);
    }
    py::list out;
    for (std::string_view w : words) {
      // Invalid UTF-8 bytes are one-byte words: decoded with replacement, never an error.
      PyObject* s = PyUnicode_DecodeUTF8(w.data(), static_cast<Py_ssize_t>(w.size()), "replace");
      if (s == nullptr) throw py::error_already_set();
      out.append(py::reinterpret_steal<py::object>(s));
    }
    return out;
  }

  std::string data_dir() const { return seg_->data_dir(); }

 private:
  std::shared_ptr<const jieba_segmenter> seg_;
};

// simdup.compat.Simhash(text).value at the package's defaults, as a bare METH_O function. The
// caller's own work (the package's algorithm, in the benchmark) evicts pybind11's dispatcher
// from the caches between calls; reloading it cost a quarter of a paragraph's fingerprint.
PyObject* compat_simhash_value(PyObject* /*module*/, PyObject* text) {
  try {
    // Long texts are fingerprinted without the GIL; short ones are not worth its hand-over.
    const auto value_of = [](auto view) {
      if (view.size() <= (1u << 16)) return python_simhash_value(view);
      py::gil_scoped_release nogil;
      return python_simhash_value(view);
    };
    uint64_t value = 0;
    if (PyUnicode_Check(text) && PyUnicode_READY(text) == 0 &&
        PyUnicode_KIND(text) == PyUnicode_2BYTE_KIND) {
      // Read in place: converting to UTF-8 (an allocation Python then keeps with the str) and
      // decoding it again cost 0.3 us per paragraph on average in bench_compat.py.
      value = value_of(std::u16string_view(reinterpret_cast<const char16_t*>(PyUnicode_DATA(text)),
                                           static_cast<std::size_t>(PyUnicode_GET_LENGTH(text))));
    } else {
      py::object storage;
      value = value_of(utf8_of(text, storage, "text"));
    }
    return PyLong_FromUnsignedLongLong(value);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyMethodDef compat_simhash_value_def = {
    "compat_simhash_value", &compat_simhash_value, METH_O,
    "The python-simhash fingerprint of a text (the package's defaults)."};

}  // namespace

void bind_fingerprint(py::module_& m) {
  m.add_object("compat_simhash_value",
               py::reinterpret_steal<py::object>(PyCFunction_NewEx(
                   &compat_simhash_value_def, nullptr, m.attr("__name__").ptr())));
  py::class_<py_fingerprinter>(m, "Fingerprinter")
      .def(py::init<py::dict>(), py::arg("options"))
      .def("fingerprint", &py_fingerprinter::fingerprint, py::arg("texts"), py::arg("threads") = 0)
      .def("fingerprint_one", &py_fingerprinter::fingerprint_one, py::arg("text"))
      .def("fingerprint_features", &py_fingerprinter::fingerprint_features, py::arg("features"))
      .def("features", &py_fingerprinter::features, py::arg("text"));
  m.def("distance", &distance, py::arg("a"), py::arg("b"));
  m.def("pairs", &pairs, py::arg("fingerprints"), py::arg("k"), py::arg("memory") = 0,
        py::arg("threads") = 0);
  m.def("clusters", &clusters, py::arg("fingerprints"), py::arg("k"), py::arg("mode"),
        py::arg("memory") = 0, py::arg("threads") = 0);
  m.def("plan", &plan, py::arg("n"), py::arg("k"), py::arg("memory"), py::arg("purpose"),
        py::arg("blocks"));
  m.def("to_hex", &to_hex, py::arg("fingerprint"));
  m.def("jieba_default_dir", &jieba_default_dir);
  py::class_<py_segmenter>(m, "Segmenter")
      .def(py::init<const std::string&, const std::vector<std::string>&, bool>(), py::arg("dict"),
           py::arg("user_dicts"), py::arg("hmm"))
      .def("segment", &py_segmenter::segment, py::arg("text"))
      .def_property_readonly("data_dir", &py_segmenter::data_dir);
}

}  // namespace simdup::python
