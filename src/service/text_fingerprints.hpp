// Fingerprints (and verification sketches) of documents sent as text, with each collection's
// settings, computed by the dedup job's document_signer so that a text gets what `simdup dedup`
// gives it.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "store/backend.hpp"

namespace simdup::detail {

/// One signer per distinct setting, created on first use and shared by all threads.
class text_fingerprints {
 public:
  /// Sets out.fingerprint (and out.sketch and out.band_keys when `config` verifies) from `text`
  /// under `config`'s settings; false when the text is too short to have a fingerprint. `text` is
  /// moved from and given back. Errors: the settings cannot be served (e.g. a compat mode this
  /// build lacks).
  result<bool> sign(const collection_config& config, std::string& text, doc_input& out);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const document_signer>> by_settings_;
};

/// The fingerprint_options a collection's settings stand for, over dedup's defaults
/// (detection_profile::default_fingerprint: min_features detection_min_features).
result<fingerprint_options> fingerprint_settings(const collection_config& config);

}  // namespace simdup::detail
