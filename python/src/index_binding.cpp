// The online Hamming index for Python. The C++ index synchronises internally, so every call
// releases the GIL and Python threads may query while others insert.
#include "bindings.hpp"

#include <simdup/online_index.hpp>

#include <memory>
#include <optional>

namespace simdup::python {
namespace {

void check_window(int64_t window) {
  if (window >= 0) return;
  raise_error(invalid_parameter({.name = "window",
                                 .value = std::to_string(window),
                                 .allowed = "0..",
                                 .reason = "must be >= 0 (0: entries never expire)"}));
}

online_index_options index_options(int k, int64_t window, uint64_t expected_size, uint64_t memory,
                                   const std::string& blocks) {
  check_window(window);
  online_index_options o;
  o.layout.k = k;
  o.window = window;
  o.expected_size = expected_size;
  o.memory = memory;
  if (!blocks.empty()) o.layout = take(index_layout::parse(k, blocks));
  return o;
}

class py_index {
 public:
  py_index(int k, int64_t window, uint64_t expected_size, uint64_t memory,
           const std::string& blocks) {
    const online_index_options o = index_options(k, window, expected_size, memory, blocks);
    index_ = std::make_shared<online_index>(take(online_index::create(o)));
  }

  static py_index load(const std::string& path, int64_t window) {
    check_window(window);
    online_index_options o;
    o.window = window;
    result<online_index> loaded = make_error(errc::internal, "not loaded");
    {
      py::gil_scoped_release nogil;
      loaded = online_index::load(path, o);
    }
    return py_index(std::make_shared<online_index>(take(std::move(loaded))));
  }

  void add(const u64_array& ids, const u64_array& fps, std::optional<i64_array> times,
           int64_t now) {
    const auto n = static_cast<std::size_t>(fps.size());
    if (static_cast<std::size_t>(ids.size()) != n) {
      throw py::value_error("add: " + std::to_string(ids.size()) + " ids for " + std::to_string(n) +
                            " fingerprints");
    }
    if (times && static_cast<std::size_t>(times->size()) != n) {
      throw py::value_error("add: " + std::to_string(times->size()) + " times for " +
                            std::to_string(n) + " fingerprints");
    }
    const uint64_t* id = ids.data();
    const uint64_t* fp = fps.data();
    const int64_t* t = times ? times->data() : nullptr;
    py::gil_scoped_release nogil;
    std::vector<index_entry> entries(n);
    for (std::size_t i = 0; i < n; ++i) entries[i] = {fp[i], id[i], t ? t[i] : now};
    index_->insert(entries);
  }

  /// Matches of each query: (query position, id, fingerprint, time, distance) arrays.
  py::tuple query(const u64_array& fps, int k, std::optional<int64_t> now) const {
    query_params params;
    params.k = k;
    if (now) params.now = *now;
    query_results found;
    {
      py::gil_scoped_release nogil;
      index_->query(std::span(fps.data(), static_cast<std::size_t>(fps.size())), found, params);
    }
    const auto n = static_cast<py::ssize_t>(found.matches.size());
    py::array_t<uint64_t> pos(n), id(n), fp(n);
    py::array_t<int64_t> time(n);
    py::array_t<uint8_t> dist(n);
    uint64_t* p = pos.mutable_data();
    uint64_t* i_ = id.mutable_data();
    uint64_t* f = fp.mutable_data();
    int64_t* t = time.mutable_data();
    uint8_t* d = dist.mutable_data();
    std::size_t j = 0;
    for (std::size_t q = 0; q < found.size(); ++q) {
      for (const index_match& m : found[q]) {
        p[j] = q;
        i_[j] = m.id;
        f[j] = m.fingerprint;
        t[j] = m.timestamp;
        d[j] = static_cast<uint8_t>(m.distance);
        ++j;
      }
    }
    return py::make_tuple(std::move(pos), std::move(id), std::move(fp), std::move(time),
                          std::move(dist));
  }

  uint64_t remove(const u64_array& ids) {
    const uint64_t* id = ids.data();
    const auto n = static_cast<std::size_t>(ids.size());
    py::gil_scoped_release nogil;
    uint64_t removed = 0;
    for (std::size_t i = 0; i < n; ++i) removed += index_->remove(id[i]);
    return removed;
  }

  void save(const std::string& path) const {
    status st;
    {
      py::gil_scoped_release nogil;
      st = index_->save(path);
    }
    check(st);
  }

  uint64_t expire(std::optional<int64_t> now) {
    py::gil_scoped_release nogil;
    return index_->expire(now ? *now : use_clock);
  }

  void compact() {
    py::gil_scoped_release nogil;
    index_->compact();
  }

  py::dict stats() const {
    index_stats s;
    {
      py::gil_scoped_release nogil;
      s = index_->stats();
    }
    py::dict d;
    d["size"] = s.size;
    d["segments"] = s.segments;
    d["sealed_segments"] = s.sealed_segments;
    d["expired"] = s.expired;
    d["removed"] = s.removed;
    d["memory_bytes"] = s.memory_bytes;
    d["largest_segment"] = s.largest_segment;
    return d;
  }

  uint64_t size() const {
    py::gil_scoped_release nogil;
    return index_->stats().size;
  }

  int k() const { return index_->layout().k; }
  std::string layout() const { return index_->layout().describe(); }

 private:
  explicit py_index(std::shared_ptr<online_index> index) : index_(std::move(index)) {}
  std::shared_ptr<online_index> index_;
};

}  // namespace

void bind_index(py::module_& m) {
  py::class_<py_index>(m, "Index")
      .def(py::init<int, int64_t, uint64_t, uint64_t, const std::string&>(), py::arg("k"),
           py::arg("window"), py::arg("expected_size"), py::arg("memory"), py::arg("blocks"))
      .def_static("load", &py_index::load, py::arg("path"), py::arg("window"))
      .def("add", &py_index::add, py::arg("ids"), py::arg("fingerprints"), py::arg("times"),
           py::arg("now"))
      .def("query", &py_index::query, py::arg("fingerprints"), py::arg("k"), py::arg("now"))
      .def("remove", &py_index::remove, py::arg("ids"))
      .def("save", &py_index::save, py::arg("path"))
      .def("expire", &py_index::expire, py::arg("now"))
      .def("compact", &py_index::compact)
      .def("stats", &py_index::stats)
      .def("size", &py_index::size)
      .def_property_readonly("k", &py_index::k)
      .def_property_readonly("layout", &py_index::layout);
}

}  // namespace simdup::python
