// A dedup run's index into a collection (`simdup serve --import NAME=DIR`): the batch and the
// online service share one index format, so a crawler's service can start from what a batch
// run kept.
#include <simdup/dedup_index.hpp>

#include "service/service_impl.hpp"

#include <algorithm>

namespace simdup {
namespace {

// Documents per insert: a durable batch each (one sync covers it).
constexpr std::size_t kImportBatch = 1000;

// The index's documents can stand for the collection's when their fingerprints were made alike
// and, for a verifying collection, their shingles too (the service keeps the collection's sketch
// size of the smallest, a prefix of the index's sorted arrays unless the index kept fewer). k may
// differ: fingerprints compare at any distance.
status check_compatible(const dedup_index& index, const collection_config& config) {
  auto wanted = collection_profile(config);
  if (!wanted) return std::move(wanted).error();
  const auto value = [](const index_profile& p, const std::string& name) -> std::string {
    for (const auto& [n, v] : p) {
      if (n == name) return v;
    }
    return "(none)";
  };
  for (const auto& [name, ours] : *wanted) {
    const bool relevant =
        name.starts_with("fingerprint.") || (config.verify > 0 && name == "verify.shingle_width");
    if (!relevant || name == "fingerprint.min_features") continue;
    const std::string theirs = value(index.profile(), name);
    if (theirs != ours) {
      return make_error(errc::invalid_argument, "the index " + index.name() + " was built with " +
                                                    name + " " + theirs + ", collection \"" +
                                                    config.name + "\" uses " + ours);
    }
  }
  if (config.verify > 0) {
    const std::string cap = value(index.profile(), "verify.max_hashes");
    if (cap == "(none)" || cap == "null") {
      return make_error(errc::invalid_argument,
                        "the index " + index.name() +
                            " has no verification shingles; collection \"" + config.name +
                            "\" verifies (a run with --verify off cannot fill it)");
    }
    const long long kept = std::stoll(cap);
    if (kept != 0 && kept < config.sketch) {
      return make_error(errc::invalid_argument, "the index " + index.name() + " keeps " + cap +
                                                    " shingle hashes per document; collection \"" +
                                                    config.name + "\" compares " +
                                                    std::to_string(config.sketch));
    }
  }
  return {};
}

}  // namespace

result<index_profile> collection_profile(const collection_config& config) {
  auto fingerprint = detail::fingerprint_settings(config);
  if (!fingerprint) return std::move(fingerprint).error();
  dedup_options o;
  o.detection = detail::detection_for(config);
  o.detection.fingerprint = *fingerprint;
  return make_index_profile(o);
}

result<service::import_counts> service::import_index(
    const std::string& collection, const std::string& path,
    const std::function<void(uint64_t, uint64_t)>& progress) {
  impl& s = *impl_;
  auto config = s.find(collection);
  if (!config) return std::move(config).error();
  auto opened = dedup_index::open(path);
  if (!opened) return std::move(opened).error();
  const dedup_index& index = **opened;
  if (auto st = check_compatible(index, *config); !st) return std::move(st).error();
  import_counts counts;
  const int64_t now = s.now();
  const auto sketch_size = static_cast<std::size_t>(config->sketch);
  const std::size_t bands = config->minhash.bands;
  const auto rows = std::find(
      index.profile().begin(), index.profile().end(),
      std::pair<std::string, std::string>("minhash.rows", std::to_string(config->minhash.rows)));
  const bool same_bands = bands > 0 && index.bands() == bands && rows != index.profile().end();
  std::vector<detail::doc_input> batch;
  std::vector<detail::doc_outcome> outcomes;
  for (uint64_t j = 0; j < index.size(); ++j) {
    if (!index.has_fingerprint(j)) {
      ++counts.without_fingerprint;
    } else {
      detail::doc_input& d = batch.emplace_back();
      d.id = std::string(index.id(j));
      d.fingerprint = index.fingerprints()[j];
      d.time = now;
      if (config->verify > 0) {
        const auto shingles = index.shingles(j);
        d.sketch.assign(shingles.begin(),
                        shingles.begin() + std::min(shingles.size(), sketch_size));
        // The index's band keys when they are the collection's (both from whole shingle sets).
        if (same_bands) {
          const auto keys = index.band_keys().subspan(j * bands, bands);
          if (keys[0] != 0) d.band_keys.assign(keys.begin(), keys.end());
        }
      }
    }
    if (batch.size() == kImportBatch || (j + 1 == index.size() && !batch.empty())) {
      outcomes.resize(batch.size());
      if (auto st =
              s.store->apply(*config, doc_op::insert, batch, now, s.opt.max_matches, outcomes);
          !st) {
        return std::move(st).error();
      }
      counts.imported += batch.size();
      batch.clear();
      if (progress) progress(j + 1, index.size());
    }
  }
  return counts;
}

}  // namespace simdup
