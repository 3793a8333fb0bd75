#include "chunk_signer.hpp"

namespace simdup::python {
namespace {

constexpr std::size_t kChunkDocs = 2048;

}  // namespace

result<chunk_signer> chunk_signer::create(const dedup_settings& settings) {
  auto signer = document_signer::create(settings.dedup);
  if (!signer) return std::move(signer).error();
  return chunk_signer(settings, std::move(signer).value());
}

chunk_signer::chunk_signer(const dedup_settings& settings, document_signer signer)
    : settings_(&settings),
      signer_(std::move(signer)),
      docs_(kChunkDocs),
      sigs_(kChunkDocs),
      headers_(kChunkDocs) {}

result<std::size_t> chunk_signer::next(reader& in,
                                       const std::function<void(const error_info&)>& on_skip) {
  const dedup_settings& s = *settings_;
  error_info err;
  std::size_t count = 0;
  while (count < kChunkDocs) {
    const read_status rs = in.next(docs_[count], err);
    if (rs == read_status::record) {
      headers_[count] = docs_[count].format == input_format::csv ? std::string(in.header()) : "";
      ++count;
    } else if (rs == read_status::bad_record) {
      if (!s.skip_bad_records) {
        return make_error(err.code, err.message + " (use on_error='skip' to skip bad records)");
      }
      on_skip(err);
    } else if (rs == read_status::failed) {
      return make_error(err.code, err.message + " (on_error='skip' skips it and goes on)");
    } else {
      break;
    }
  }
  if (s.dedup.mode == dedup_mode::batch && s.dedup.keep.rule == keep_rule::field) {
    for (std::size_t i = 0; i < count; ++i) {
      const document& doc = docs_[i];
      if (doc.format != input_format::jsonl && doc.format != input_format::csv) {
        return make_error(errc::invalid_argument,
                          "keep='field:" + s.dedup.keep.field +
                              "' needs records with named fields (JSONL, or CSV with a header "
                              "row), but " +
                              doc.source + " is " + input_format_name(doc.format));
      }
    }
  }
  parallel_for(count, worker_count(s.threads, count, 64), 64,
               [&](std::size_t begin, std::size_t end) {
                 for (std::size_t i = begin; i < end; ++i)
                   signer_.sign(docs_[i], sigs_[i], headers_[i]);
               });
  return count;
}

}  // namespace simdup::python
