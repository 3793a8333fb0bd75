// Reads records chunk by chunk and signs each chunk on the settings' threads: the loop that
// simdup.dedup and simdup.dask's sign step share.
#pragma once

#include "bindings.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace simdup::python {

class chunk_signer {
 public:
  static result<chunk_signer> create(const dedup_settings& settings);

  /// Reads and signs the next chunk of records into docs()[0, n) and signatures()[0, n);
  /// returns n (0: the input is done). A bad record is an error unless the settings skip
  /// them; then `on_skip` sees each one (`in` tells its reason). keep=field:NAME on records
  /// without named fields is an error.
  result<std::size_t> next(reader& in, const std::function<void(const error_info&)>& on_skip);

  std::vector<document>& docs() noexcept { return docs_; }
  std::vector<doc_signature>& signatures() noexcept { return sigs_; }

 private:
  chunk_signer(const dedup_settings& settings, document_signer signer);

  const dedup_settings* settings_;
  document_signer signer_;
  std::vector<document> docs_;
  std::vector<doc_signature> sigs_;
  std::vector<std::string> headers_;  // CSV header rows, for keep=field:NAME
};

}  // namespace simdup::python
