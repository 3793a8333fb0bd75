// Fingerprints of documents sent as text, with each collection's fingerprint settings.
#pragma once

#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "store/backend.hpp"

namespace simdup::detail {

/// One fingerprinter per distinct setting, created on first use and shared by all threads.
class text_fingerprints {
 public:
  /// The fingerprint of `text` under `config`'s settings; nullopt when the text is too short to
  /// have one. Errors: the settings cannot be served (e.g. a compat mode this build lacks).
  result<std::optional<uint64_t>> fingerprint(const collection_config& config,
                                              std::string_view text);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const fingerprinter>> by_settings_;
};

/// The fingerprint_options a collection's settings stand for.
result<fingerprint_options> fingerprint_settings(const collection_config& config);

}  // namespace simdup::detail
