#include "dedup/job_index.hpp"

#include <simdup/minhash.hpp>

#include <cerrno>
#include <system_error>
#include "util/write_errc.hpp"

namespace simdup::detail {
namespace {

namespace fs = std::filesystem;

struct __attribute__((packed)) staged_document {
  uint64_t fingerprint, url_key, title_key, content_key;
  uint8_t has_fingerprint;
};
static_assert(sizeof(staged_document) == 33);

error_info stage_error(const fs::path& path, const char* what, int err) {
  return make_error(write_errc(err), std::string("cannot ") + what + " " + path.string() + ": " +
                                         std::generic_category().message(err));
}

}  // namespace

result<index_stage> index_stage::create(const fs::path& dir) {
  const fs::path path = dir / ".index-stage";
  std::FILE* f = std::fopen(path.c_str(), "w+b");
  if (!f) return stage_error(path, "create", errno);
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  return index_stage(path, f);
}

status index_stage::add(const doc_signature& sig) {
  const staged_document d{sig.fingerprint, sig.url_key, sig.title_key, sig.content_key,
                          static_cast<uint8_t>(sig.has_fingerprint)};
  if (std::fwrite(&d, sizeof d, 1, f_) != 1) return stage_error(path_, "write", errno);
  ++count_;
  return {};
}

status index_stage::write(const fs::path& out_dir, const dedup_options& options,
                          const std::vector<bool>& kept, const id_store& ids,
                          const std::function<status(uint32_t, std::vector<uint32_t>&)>& shingles,
                          const std::vector<std::string>& sources, dedup_summary& summary) {
  if (kept.size() != count_) {
    return make_error(errc::internal, "index: " + std::to_string(kept.size()) + " decisions for " +
                                          std::to_string(count_) + " staged documents");
  }
  if (std::fflush(f_) != 0) return stage_error(path_, "write", errno);
  if (std::fseek(f_, 0, SEEK_SET) != 0) return stage_error(path_, "read", errno);
  const minhash_options minhash =
      options.detection.effective(options.mode == dedup_mode::batch).minhash;
  auto writer =
      dedup_index_writer::create(out_dir.string(), make_index_profile(options), minhash.bands);
  if (!writer) return std::move(writer).error();
  std::vector<uint32_t> hashes;
  std::vector<uint64_t> bands;
  staged_document d{};
  for (uint32_t i = 0; i < count_; ++i) {
    if (std::fread(&d, sizeof d, 1, f_) != 1) return stage_error(path_, "read", errno);
    if (!kept[i]) continue;
    hashes.clear();
    bands.clear();
    if (d.has_fingerprint) {
      if (auto st = shingles(i, hashes); !st) return st;
      if (minhash.bands > 0 && !hashes.empty()) minhash_band_keys(hashes, minhash, bands);
    }
    const index_document doc{.fingerprint = d.fingerprint,
                             .has_fingerprint = d.has_fingerprint != 0,
                             .url_key = d.url_key,
                             .title_key = d.title_key,
                             .content_key = d.content_key,
                             .id = ids.id(i),
                             .id_is_number = ids.is_number(i),
                             .shingles = hashes,
                             .band_keys = bands};
    if (auto st = writer->add(doc); !st) return st;
  }
  if (auto st = writer->finish(sources); !st) return st;
  std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  fs::remove(path_, ec);
  const dedup_index_writer::written& sizes = writer->sizes();
  summary.index_written = true;
  summary.index_documents = writer->size();
  summary.index_bytes = sizes.total;
  summary.index_id_bytes = sizes.ids;
  summary.index_verification_bytes = sizes.verification;
  summary.index_manifest_bytes = sizes.manifest;
  return {};
}

index_stage::index_stage(index_stage&& o) noexcept
    : path_(std::move(o.path_)), f_(std::exchange(o.f_, nullptr)), count_(o.count_) {}
index_stage& index_stage::operator=(index_stage&& o) noexcept {
  if (this != &o) {
    if (f_) std::fclose(f_);
    path_ = std::move(o.path_);
    f_ = std::exchange(o.f_, nullptr);
    count_ = o.count_;
  }
  return *this;
}
index_stage::~index_stage() {
  if (f_) {
    std::fclose(f_);
    std::error_code ec;
    fs::remove(path_, ec);
  }
}

}  // namespace simdup::detail
