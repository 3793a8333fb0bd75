// simdup.dedup for Python: the same signer and engines as `simdup dedup` (document_signer,
// stream_deduplicator / batch_deduplicator), fed by the library's readers, returning one
// decision per record instead of writing an output directory. Options carry the CLI's names
// and defaults, so the decisions equal the CLI's for the same options.
#include "bindings.hpp"
#include "chunk_signer.hpp"

#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/reader.hpp>
#include <simdup/simhash.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace simdup::python {
dedup_settings read_dedup_settings(py::dict options, bool from_memory, const char* what) {
  option_reader r(std::move(options));
  dedup_settings s;
  dedup_options& d = s.dedup;
  detection_profile& p = d.detection;
  p.fingerprint = read_fingerprint_options(r, p.fingerprint);

  if (auto v = r.choice("input_format", {"auto", "jsonl", "ndjson", "json", "tsv", "csv", "text",
                                         "txt", "warc", "wet"})) {
    s.reader.format = take(parse_input_format(*v));
  } else if (from_memory) {
    s.reader.format = input_format::jsonl;
  }
  if (auto v = r.text("id_field")) s.reader.fields.id = *v;
  if (auto v = r.text("text_field")) s.reader.fields.text = *v;
  if (auto v = r.text("url_field")) s.reader.fields.url = *v;
  if (auto v = r.text("title_field")) s.reader.fields.title = *v;
  if (auto v = r.text("time_field")) s.reader.fields.time = *v;
  if (auto v = r.text("features_field")) s.reader.fields.features = *v;
  if (auto v = r.integer("max_record_mb", 1, 1 << 20))
    s.reader.max_record_bytes = std::size_t(*v) << 20;

  d.mode = dedup_mode::batch;  // Python has no stdin: the CLI's default for files
  if (auto v = r.choice("mode", {"stream", "batch"})) {
    d.mode = *v == "stream" ? dedup_mode::stream : dedup_mode::batch;
  }
  if (auto v = r.integer("k", 0, max_index_k)) p.k = static_cast<int>(*v);
  if (auto layers = r.texts("layers")) {
    // "url,exact,near" or ["url", "exact", "near"].
    std::string list;
    for (const std::string& entry : *layers) list += (list.empty() ? "" : ",") + entry;
    check(parse_layers(list, d));
  }
  if (auto v = r.text("keep")) s.keep_spec = *v;
  d.keep = take(parse_keep_policy(s.keep_spec));
  if (auto v = r.choice("clusters", {"anchored", "centers", "components", "star"})) {
    p.clustering = take(parse_linking(*v));
  }
  if (auto floor = r.number("anchor_floor")) p.anchor_floor = *floor;
  if (auto v = r.text("minhash")) p.minhash = take(parse_minhash_spec(*v));
  // "off": every pair within k is a duplicate (the package maps verify=None/False to it).
  const std::string verify = r.text("verify").value_or("jaccard:0.8");
  const std::size_t max_hashes = r.integer("verify_max_hashes", 0, 1LL << 40).value_or(0);
  const std::size_t width = r.integer("verify_shingle_width", 1, 64).value_or(5);
  const std::string tmp_dir = r.text("tmp_dir").value_or("");
  p.verify.reset();
  if (verify != "off") {
    verify_options v = take(parse_verify_spec(verify));
    v.max_hashes = max_hashes;
    v.shingle_width = width;
    v.tmp_dir = tmp_dir;
    p.verify = v;
  }
  p = p.effective(d.mode == dedup_mode::batch);
  check(p.validate());
  s.skip_bad_records = r.choice("on_error", {"fail", "skip"}).value_or("fail") == "skip";
  s.reader.skip_failed_inputs = s.skip_bad_records;
  s.threads = static_cast<unsigned>(r.integer("threads", 0, 1 << 16).value_or(0));
  r.finish(what);
  return s;
}

namespace {

struct dedup_run {
  std::vector<std::string> ids;
  std::vector<bool> id_is_number;
  std::vector<uint64_t> lines;  ///< each record's 1-based line (records given as data: one a line)
  std::vector<dedup_decision> decisions;
  dedup_summary summary;
};

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// Reads, signs in parallel and decides, chunk by chunk. Runs without the GIL.
result<dedup_run> run(reader& in, const dedup_settings& s, const std::vector<std::string>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  dedup_run out;
  dedup_summary& sum = out.summary;
  const dedup_options& d = s.dedup;
  sum.inputs = inputs;
  describe_parameters(sum, d, s.keep_spec, s.threads);

  auto signer = chunk_signer::create(s);
  if (!signer) return std::move(signer).error();
  std::optional<stream_deduplicator> stream;
  std::optional<batch_deduplicator> batch;
  if (d.mode == dedup_mode::stream) {
    auto e = stream_deduplicator::create(d);
    if (!e) return std::move(e).error();
    stream.emplace(std::move(e).value());
  } else {
    auto e = batch_deduplicator::create(d);
    if (!e) return std::move(e).error();
    batch.emplace(std::move(e).value());
  }

  const auto skipped = [&](const error_info&) {
    ++sum.skipped;
    ++sum.read;
    ++sum.skipped_reasons[std::string(in.last_skip_reason())];
  };
  std::vector<dedup_decision> decided;
  for (;;) {
    auto signed_count = signer->next(in, skipped);
    if (!signed_count) return std::move(signed_count).error();
    const std::size_t count = *signed_count;
    if (count == 0) break;
    std::vector<doc_signature>& sigs = signer->signatures();
    if (stream) {
      if (auto st = stream->add(std::span(sigs.data(), count), decided); !st)
        return std::move(st).error();
      out.decisions.insert(out.decisions.end(), decided.begin(), decided.begin() + count);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const document& doc = signer->docs()[i];
      if (sum.output_format.empty()) sum.output_format = input_format_name(doc.format);
      ++sum.read;
      sum.invalid_utf8 += sigs[i].invalid_utf8;
      if (!sigs[i].has_fingerprint) ++sum.short_documents;
      out.ids.push_back(doc.id);
      out.id_is_number.push_back(doc.id_is_number);
      out.lines.push_back(doc.line);
      if (batch) {
        if (auto st = batch->add(std::move(sigs[i])); !st) return std::move(st).error();
      }
    }
  }
  sum.bytes = in.stats().bytes;
  if (batch) {
    auto decisions = batch->finish();
    if (!decisions) return std::move(decisions).error();
    out.decisions = std::move(decisions).value();
    sum.candidate_pairs = batch->candidate_pairs();
    sum.rejected_pairs = batch->rejected_pairs();
    sum.prefiltered_pairs = batch->prefiltered_pairs();
    sum.minhash_pairs = batch->minhash_candidate_pairs();
    sum.engine_memory_bytes = batch->memory_bytes();
    sum.verify_spill_bytes = batch->spilled_bytes();
  } else {
    sum.candidate_pairs = stream->candidate_pairs();
    sum.rejected_pairs = stream->rejected_pairs();
    sum.engine_memory_bytes = stream->memory_bytes();
    sum.verify_spill_bytes = stream->spilled_bytes();
  }
  const auto n = static_cast<uint32_t>(out.decisions.size());
  std::vector<uint32_t> sizes(n, 0);
  for (const auto& index : d.against) {
    sum.against.push_back({.name = index->name(), .documents = index->size()});
  }
  std::vector<std::vector<bool>> hit(d.against.size());
  for (std::size_t x = 0; x < d.against.size(); ++x) hit[x].resize(d.against[x]->size());
  for (uint32_t i = 0; i < n; ++i) {
    const dedup_decision& decision = out.decisions[i];
    count_decision(sum, decision, i);
    if (decision.against == 0) {
      ++sizes[decision.representative];
      continue;
    }
    dedup_summary::against_index& a = sum.against[decision.against - 1];
    ++a.dropped;
    if (!hit[decision.against - 1][decision.representative]) {
      hit[decision.against - 1][decision.representative] = true;
      ++a.documents_hit;
    }
  }
  sum.against_only = d.against_only;
  if (batch) sum.against_candidate_pairs = batch->against_candidate_pairs();
  for (uint32_t i = 0; i < n; ++i) {
    if (sizes[i] > 0) ++sum.cluster_sizes[sizes[i]];
  }
  sum.seconds_total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sum.seconds_by_phase.emplace_back("dedup", sum.seconds_total);
  sum.peak_rss_bytes = peak_rss_bytes();
  sum.samples_note = "simdup.dedup (Python) keeps no sample texts.";
  return out;
}

}  // namespace

py::object id_object(const std::string& id, bool is_number) {
  if (is_number) {
    // JSON numbers come back as numbers: int when integral, else float.
    PyObject* v = PyLong_FromString(id.c_str(), nullptr, 10);
    if (v != nullptr) return py::reinterpret_steal<py::object>(v);
    PyErr_Clear();
    try {
      return py::float_(std::stod(id));
    } catch (const std::exception&) {
    }
  }
  PyObject* s = PyUnicode_DecodeUTF8(id.data(), static_cast<Py_ssize_t>(id.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(s);
}

// An index opened once per process for the same files (simdup.dask's cluster tasks open the
// same indexes many times, and opening reads every file for its checksums): keyed by the path
// and the manifest's size and time, so that an index written anew is opened anew.
std::shared_ptr<const dedup_index> open_index(const std::string& path, bool cached) {
  if (!cached) return take(dedup_index::open(path));
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path manifest = fs::path(path) / "manifest.json";
  if (!fs::exists(manifest, ec)) manifest = fs::path(path) / "index" / "manifest.json";
  const auto size = fs::file_size(manifest, ec);
  const auto time = fs::last_write_time(manifest, ec).time_since_epoch().count();
  const std::string key = path + '\0' + std::to_string(size) + '\0' + std::to_string(time);
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const dedup_index>> opened;
  {
    std::lock_guard lock(mutex);
    if (const auto it = opened.find(key); it != opened.end()) return it->second;
  }
  auto index = take(dedup_index::open(path));
  std::lock_guard lock(mutex);
  return opened.emplace(key, std::move(index)).first->second;
}

void open_against(dedup_settings& s, const std::vector<std::string>& paths, bool only,
                  bool cached) {
  if (only && paths.empty()) {
    raise_error(error_info{
        errc::invalid_argument, "dedup: against_only=True needs against=",
        parameter_info{
            .name = "against_only", .value = "True", .reason = "needs", .needs = "against"}});
  }
  if (!paths.empty() && s.dedup.mode != dedup_mode::batch) {
    raise_error(error_info{errc::invalid_argument, "dedup: against= needs mode=\"batch\"",
                           parameter_info{.name = "against", .reason = "needs mode=\"batch\""}});
  }
  if (paths.size() > 255) {
    const std::string count = std::to_string(paths.size());
    raise_error(error_info{errc::invalid_argument,
                           "dedup: against= takes at most 255 indexes, got " + count,
                           parameter_info{.name = "against",
                                          .value = count,
                                          .allowed = "at most 255 indexes",
                                          .reason = "takes at most 255 indexes, got " + count}});
  }
  const index_profile profile = make_index_profile(s.dedup);
  for (const std::string& path : paths) {
    auto index = open_index(path, cached);
    check(index->check_profile(profile));
    s.dedup.against.push_back(std::move(index));
  }
  s.dedup.against_only = only;
}

namespace {

py::dict dedup(std::vector<std::string> inputs, std::optional<py::bytes> data, py::dict options,
               std::vector<std::string> against, bool against_only) {
  dedup_settings s = read_dedup_settings(std::move(options), data.has_value());
  open_against(s, against, against_only, false);
  std::optional<reader> in;
  std::string buffer;
  if (data) buffer = std::string(*data);
  result<dedup_run> outcome = make_error(errc::internal, "not run");
  {
    py::gil_scoped_release nogil;
    if (data) {
      in.emplace(reader::from_memory("records", std::move(buffer), s.reader));
    } else {
      auto opened = reader::open(inputs, s.reader);
      if (!opened) {
        outcome = std::move(opened).error();
      } else {
        in.emplace(std::move(opened).value());
      }
    }
    if (in) outcome = run(*in, s, data ? std::vector<std::string>{"records"} : inputs);
  }
  dedup_run r = take(std::move(outcome));
  const auto n = static_cast<py::ssize_t>(r.decisions.size());
  py::list ids(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    ids[static_cast<std::size_t>(i)] = id_object(r.ids[i], r.id_is_number[i]);
  }
  py::array_t<uint32_t> rep(n);
  py::array_t<uint8_t> layer(n);
  py::array_t<int8_t> distance(n);
  py::array_t<float> jaccard(n);
  py::array_t<uint64_t> lines(n);
  py::array_t<uint8_t> earlier(n);
  py::list earlier_ids(n);  // the earlier run's id of a document dropped against it, else None
  for (py::ssize_t i = 0; i < n; ++i) {
    const dedup_decision& d = r.decisions[i];
    earlier.mutable_data()[i] = d.against;
    if (d.against != 0) {
      const dedup_index& index = *s.dedup.against[d.against - 1];
      earlier_ids[static_cast<std::size_t>(i)] =
          id_object(std::string(index.id(d.representative)), index.id_is_number(d.representative));
    } else {
      earlier_ids[static_cast<std::size_t>(i)] = py::none();
    }
    lines.mutable_data()[i] = r.lines[static_cast<std::size_t>(i)];
    rep.mutable_data()[i] = d.representative;
    layer.mutable_data()[i] = static_cast<uint8_t>(d.layer);
    distance.mutable_data()[i] = d.distance;
    jaccard.mutable_data()[i] = d.jaccard;
  }
  py::dict out;
  out["ids"] = ids;
  out["representative"] = rep;
  out["layer"] = layer;
  out["distance"] = distance;
  out["jaccard"] = jaccard;
  out["lines"] = lines;
  out["against"] = earlier;
  out["against_ids"] = earlier_ids;
  py::list names;
  for (const auto& index : s.dedup.against) names.append(index->name());
  out["against_names"] = names;
  out["summary"] = summary_json(r.summary);
  return out;
}

py::dict side_dict(const doc_signature& sig, const fingerprint_options& fp, const document& doc) {
  py::dict d;
  d["id"] = doc.id;
  d["fingerprint"] =
      sig.has_fingerprint ? py::object(py::str(to_hex(sig.fingerprint))) : py::object(py::none());
  d["status"] = sig.has_fingerprint ? "ok" : "too_short";
  d["html"] = sig.html;
  // The features of the pipeline the signer used: with HTML normalisation for a page.
  fingerprint_options o = fp;
  if (sig.html && o.compat == compat_mode::none) o.normalize.html = true;
  fingerprinter f = take(fingerprinter::create(o));
  py::list features;
  for (const weighted_feature& w : f.features(doc.text)) {
    features.append(py::make_tuple(w.text, w.weight));
  }
  d["features"] = features;
  return d;
}

/// simdup.explain: two texts through dedup's signer and rules under the same options.
py::dict explain(std::string a, std::string b, py::dict options) {
  const dedup_settings s = read_dedup_settings(std::move(options), true, "explain");
  document docs[2];
  docs[0].text = std::move(a);
  docs[1].text = std::move(b);
  pair_explanation e = take(explain_pair(s.dedup, docs[0], docs[1]));
  py::dict out;
  out["a"] = side_dict(e.a, s.dedup.detection.fingerprint, docs[0]);
  out["b"] = side_dict(e.b, s.dedup.detection.fingerprint, docs[1]);
  out["distance"] = e.distance >= 0 ? py::object(py::int_(e.distance)) : py::object(py::none());
  out["jaccard"] =
      std::isnan(e.jaccard) ? py::object(py::none()) : py::object(py::float_(e.jaccard));
  out["minhash_candidate"] = e.minhash_candidate;
  out["duplicate"] = e.duplicate;
  out["layer"] = e.duplicate ? py::object(py::str(layer_name(e.layer))) : py::object(py::none());
  out["reason"] = e.reason;
  out["fingerprints"] = py::make_tuple(e.a.fingerprint, e.b.fingerprint);
  return out;
}

// summary.json of a run with these options that read nothing: its "version" and "parameters"
// are those `simdup dedup` writes. Raises what simdup.dedup raises for the options (ValueError
// with the library's message, TypeError naming unknown options), so that a driver (simdup.dask)
// checks them with the library's own rules before any work starts.
std::string dedup_parameters(py::dict options, std::vector<std::string> inputs,
                             std::string output_format) {
  const dedup_settings s = read_dedup_settings(std::move(options), false);
  dedup_summary sum;
  sum.inputs = std::move(inputs);
  describe_parameters(sum, s.dedup, s.keep_spec, s.threads);
  sum.output_format = std::move(output_format);
  return summary_json(sum);
}

}  // namespace

void bind_dedup(py::module_& m) {
  m.def("dedup", &dedup, py::arg("inputs"), py::arg("data"), py::arg("options"),
        py::arg("against") = std::vector<std::string>{}, py::arg("against_only") = false);
  m.def("explain", &explain, py::arg("a"), py::arg("b"), py::arg("options"));
  m.def("dedup_parameters", &dedup_parameters, py::arg("options"), py::arg("inputs"),
        py::arg("output_format"));
  py::list names;
  for (auto layer : {dedup_layer::none, dedup_layer::url, dedup_layer::title, dedup_layer::exact,
                     dedup_layer::near}) {
    names.append(layer_name(layer));
  }
  m.attr("LAYER_NAMES") = names;
  m.attr("MAX_INDEX_K") = max_index_k;  // the largest k (dedup, the index)
}

}  // namespace simdup::python
