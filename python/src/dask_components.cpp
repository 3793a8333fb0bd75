// simdup.dask's decisions: the batch or stream engine over whole connected components (with
// earlier runs' indexes), and report.html of a run.
#include "bindings.hpp"
#include "dask_arrays.hpp"

#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_report.hpp>

#include <cmath>
#include <map>

namespace simdup::python {
namespace {

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

}  // namespace

void bind_dask_components(py::module_& m) {
  m.def("dask_cluster", &cluster, py::arg("columns"), py::arg("options"),
        py::arg("against") = std::vector<std::string>{}, py::arg("against_only") = false);
  m.def("dask_against_sizes", &against_sizes, py::arg("options"), py::arg("against"),
        py::arg("against_only"));
  m.def("dask_stream", &stream, py::arg("columns"), py::arg("options"));
  m.def("dask_report_html", &report, py::arg("summary"), py::arg("options"), py::arg("inputs"),
        py::arg("samples"));
}

}  // namespace simdup::python
