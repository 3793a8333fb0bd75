// The dedup index (docs/index-format.md, "Dedup index"): one little-endian column file per field,
// each document at the same position in every column, and manifest.json with the count, the
// profile and each file's size and XXH3-64. Columns are mapped read-only and used in place.
#include <simdup/dedup_index.hpp>
#include <simdup/json.hpp>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "util/write_errc.hpp"

namespace simdup {
namespace {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "the dedup index is little-endian; add byte swapping for this platform");

constexpr const char* kFormat = "simdup dedup index";
constexpr uint8_t kHasFingerprint = 1, kIdIsNumber = 2;

// The columns, in manifest order. Fixed-width columns hold `width` bytes per document (bands:
// per band); ids.txt and shingles.u32 are addressed by their .end columns.
enum column : std::size_t {
  c_fingerprints,
  c_flags,
  c_url,
  c_title,
  c_content,
  c_id_text,
  c_id_ends,
  c_shingles,
  c_shingle_ends,
  c_bands,
  column_count
};
constexpr const char* kFileNames[column_count] = {
    "fingerprints.u64", "flags.u8",    "url.u64",      "title.u64",        "content.u64",
    "ids.txt",          "ids.end.u64", "shingles.u32", "shingles.end.u64", "bands.u64"};

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

error_info write_failure(const fs::path& path, int err) {
  return make_error(write_errc(err),
                    "cannot write " + path.string() + ": " + std::generic_category().message(err));
}

// A column file being written, with its running checksum.
class column_writer {
 public:
  status open(const fs::path& path) {
    path_ = path;
    f_ = std::fopen(path.c_str(), "wbx");
    if (!f_) return write_failure(path, errno);
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    state_ = XXH3_createState();
    XXH3_64bits_reset(state_);
    return {};
  }
  status write(const void* data, std::size_t n) {
    if (n == 0) return {};
    if (std::fwrite(data, 1, n, f_) != n) return write_failure(path_, errno);
    XXH3_64bits_update(state_, data, n);
    bytes_ += n;
    return {};
  }
  template <class T>
  status put(T v) {
    return write(&v, sizeof v);
  }
  // Flushes and closes; the checksum and size are then final. Not synced, like the run's other
  // outputs: a file cut short by a crash fails its checksum when the index is opened.
  status close() {
    if (!f_) return {};
    const bool flushed = std::fflush(f_) == 0;
    const int err = errno;
    const bool closed = std::fclose(f_) == 0;
    f_ = nullptr;
    if (!flushed || !closed) return write_failure(path_, flushed ? errno : err);
    return {};
  }
  uint64_t bytes() const noexcept { return bytes_; }
  uint64_t checksum() const noexcept { return XXH3_64bits_digest(state_); }
  column_writer() = default;
  column_writer(const column_writer&) = delete;
  column_writer& operator=(const column_writer&) = delete;
  ~column_writer() {
    if (f_) std::fclose(f_);
    if (state_) XXH3_freeState(state_);
  }

 private:
  fs::path path_;
  std::FILE* f_ = nullptr;
  XXH3_state_t* state_ = nullptr;
  uint64_t bytes_ = 0;
};

// A read-only mapping of a whole file (none for an empty one).
struct mapped_file {
  const uint8_t* data = nullptr;
  std::size_t size = 0;
  mapped_file() = default;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  ~mapped_file() {
    if (data) ::munmap(const_cast<uint8_t*>(data), size);
  }
};

status map_file(const fs::path& path, mapped_file& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(
        errno == ENOENT ? errc::corrupt_data : errc::io_error,
        "cannot open " + path.string() + ": " + std::generic_category().message(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(errc::io_error,
                      "cannot read " + path.string() + ": " + std::generic_category().message(err));
  }
  out.size = static_cast<std::size_t>(st.st_size);
  if (out.size > 0) {
    void* p = ::mmap(nullptr, out.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return make_error(errc::io_error, "cannot map " + path.string() + ": " +
                                            std::generic_category().message(err));
    }
    out.data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return {};
}

std::string profile_json(const index_profile& profile) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  for (const auto& [name, value] : profile) w.key(name).raw(value);
  w.end_object();
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writing

struct dedup_index_writer::impl {
  fs::path dir;
  index_profile profile;
  std::size_t bands = 0;
  column_writer files[column_count];
  uint64_t documents = 0, id_end = 0, shingle_end = 0;
  std::vector<uint64_t> zero_bands;
  bool finished = false;
  written sizes;
};

result<dedup_index_writer> dedup_index_writer::create(const std::string& dir, index_profile profile,
                                                      std::size_t bands) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return make_error(errc::invalid_argument, "index directory " + dir + " exists already");
  }
  if (!fs::create_directories(dir, ec)) {
    return make_error(errc::io_error, "cannot create " + dir + ": " + ec.message());
  }
  auto p = std::make_unique<impl>();
  p->dir = dir;
  p->profile = std::move(profile);
  p->bands = bands;
  p->zero_bands.assign(bands, 0);
  for (std::size_t c = 0; c < column_count; ++c) {
    if (c == c_bands && bands == 0) continue;
    if (auto st = p->files[c].open(p->dir / kFileNames[c]); !st) return std::move(st).error();
  }
  return dedup_index_writer(std::move(p));
}

status dedup_index_writer::add(const index_document& d) {
  impl& s = *impl_;
  if (!d.band_keys.empty() && d.band_keys.size() != s.bands) {
    return make_error(errc::internal, "index document with " + std::to_string(d.band_keys.size()) +
                                          " band keys, the index has " + std::to_string(s.bands));
  }
  const uint8_t flags =
      (d.has_fingerprint ? kHasFingerprint : 0) | (d.id_is_number ? kIdIsNumber : 0);
  s.id_end += d.id.size();
  s.shingle_end += d.shingles.size();
  for (const status& st :
       {s.files[c_fingerprints].put(d.fingerprint), s.files[c_flags].put(flags),
        s.files[c_url].put(d.url_key), s.files[c_title].put(d.title_key),
        s.files[c_content].put(d.content_key), s.files[c_id_text].write(d.id.data(), d.id.size()),
        s.files[c_id_ends].put(s.id_end),
        s.files[c_shingles].write(d.shingles.data(), d.shingles.size_bytes()),
        s.files[c_shingle_ends].put(s.shingle_end)}) {
    if (!st) return st;
  }
  if (s.bands > 0) {
    const std::span<const uint64_t> keys = d.band_keys.empty() ? s.zero_bands : d.band_keys;
    if (auto st = s.files[c_bands].write(keys.data(), keys.size_bytes()); !st) return st;
  }
  ++s.documents;
  return {};
}

uint64_t dedup_index_writer::size() const noexcept {
  return impl_->documents;
}

status dedup_index_writer::finish(const std::vector<std::string>& sources) {
  impl& s = *impl_;
  for (std::size_t c = 0; c < column_count; ++c) {
    if (auto st = s.files[c].close(); !st) return st;
  }
  std::string text;
  json::writer w(text);
  w.begin_object().key("format").value(kFormat);
  w.key("version").value(static_cast<uint64_t>(dedup_index_version));
  w.key("documents").value(s.documents);
  w.key("bands").value(static_cast<uint64_t>(s.bands));
  w.key("profile").raw(profile_json(s.profile));
  w.key("sources").begin_array();
  for (const std::string& src : sources) w.value(src);
  w.end_array();
  w.key("files").begin_object();
  for (std::size_t c = 0; c < column_count; ++c) {
    if (c == c_bands && s.bands == 0) continue;
    w.key(kFileNames[c]).begin_object().key("bytes").value(s.files[c].bytes());
    w.key("xxh3").value(hex64(s.files[c].checksum())).end_object();
  }
  w.end_object().end_object();
  text.push_back('\n');
  column_writer manifest;
  const fs::path tmp = s.dir / "manifest.json.tmp";
  if (auto st = manifest.open(tmp); !st) return st;
  if (auto st = manifest.write(text.data(), text.size()); !st) return st;
  if (auto st = manifest.close(); !st) return st;
  std::error_code ec;
  fs::rename(tmp, s.dir / "manifest.json", ec);
  if (ec)
    return make_error(errc::io_error,
                      "cannot write " + (s.dir / "manifest.json").string() + ": " + ec.message());
  s.finished = true;
  s.sizes.manifest = text.size();
  s.sizes.ids = s.files[c_id_text].bytes() + s.files[c_id_ends].bytes();
  s.sizes.verification =
      s.files[c_shingles].bytes() + s.files[c_shingle_ends].bytes() + s.files[c_bands].bytes();
  s.sizes.total = s.sizes.manifest;
  for (const column_writer& f : s.files) s.sizes.total += f.bytes();
  return {};
}

const dedup_index_writer::written& dedup_index_writer::sizes() const noexcept {
  return impl_->sizes;
}

dedup_index_writer::dedup_index_writer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
dedup_index_writer::dedup_index_writer(dedup_index_writer&&) noexcept = default;
dedup_index_writer& dedup_index_writer::operator=(dedup_index_writer&&) noexcept = default;
dedup_index_writer::~dedup_index_writer() = default;

// ---------------------------------------------------------------------------------------------
// Reading

struct dedup_index::impl {
  std::string name, directory;
  uint64_t documents = 0;
  std::size_t bands = 0;
  index_profile profile;
  std::vector<std::string> sources;
  uint64_t bytes = 0, manifest_bytes = 0;
  mapped_file files[column_count];

  template <class T>
  std::span<const T> column(std::size_t c) const {
    return {reinterpret_cast<const T*>(files[c].data), files[c].size / sizeof(T)};
  }
};

namespace {

struct index_manifest {
  uint64_t documents = 0;
  std::size_t bands = 0;
  index_profile profile;
  std::vector<std::string> sources;
};

// The manifest's fields, checked for type; the message names the manifest.
status parse_manifest(const fs::path& path, std::string_view text, index_manifest& out,
                      uint64_t sizes[column_count], uint64_t sums[column_count],
                      bool present[column_count]) {
  const auto bad = [&](const std::string& what) {
    return make_error(errc::corrupt_data,
                      path.string() + " is not a dedup index manifest: " + what);
  };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) {
    return bad("not JSON");
  }
  std::string_view format;
  if (root["format"].get(format) != simdjson::SUCCESS || format != kFormat) {
    return bad("no \"format\": \"" + std::string(kFormat) + "\"");
  }
  uint64_t version = 0;
  if (root["version"].get(version) != simdjson::SUCCESS) return bad("no version");
  if (version != dedup_index_version) {
    return make_error(errc::unsupported,
                      path.parent_path().string() + " is a dedup index of version " +
                          std::to_string(version) + "; this simdup reads version " +
                          std::to_string(dedup_index_version));
  }
  uint64_t bands = 0;
  if (root["documents"].get(out.documents) != simdjson::SUCCESS ||
      root["bands"].get(bands) != simdjson::SUCCESS || bands > 64) {
    return bad("no documents or bands");
  }
  out.bands = static_cast<std::size_t>(bands);
  simdjson::dom::object profile;
  if (root["profile"].get(profile) != simdjson::SUCCESS) return bad("no profile");
  for (auto field : profile) {
    out.profile.emplace_back(std::string(field.key), simdjson::minify(field.value));
  }
  simdjson::dom::array sources;
  if (root["sources"].get(sources) == simdjson::SUCCESS) {
    for (auto src : sources) {
      std::string_view s;
      if (src.get(s) == simdjson::SUCCESS) out.sources.emplace_back(s);
    }
  }
  simdjson::dom::object files;
  if (root["files"].get(files) != simdjson::SUCCESS) return bad("no files");
  for (std::size_t c = 0; c < column_count; ++c) {
    simdjson::dom::object file;
    present[c] = files[kFileNames[c]].get(file) == simdjson::SUCCESS;
    if (!present[c]) {
      if (c == c_bands && out.bands == 0) continue;
      return bad(std::string("no entry for ") + kFileNames[c]);
    }
    std::string_view sum;
    if (file["bytes"].get(sizes[c]) != simdjson::SUCCESS ||
        file["xxh3"].get(sum) != simdjson::SUCCESS || sum.size() != 16) {
      return bad(std::string("bad entry for ") + kFileNames[c]);
    }
    sums[c] = std::strtoull(std::string(sum).c_str(), nullptr, 16);
  }
  return {};
}

status read_text(const fs::path& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return make_error(
        errno == ENOENT ? errc::not_found : errc::io_error,
        "cannot open " + path.string() + ": " + std::generic_category().message(errno));
  }
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out.append(buf, n);
    if (out.size() > (64u << 20)) break;
  }
  std::fclose(f);
  return {};
}

}  // namespace

result<std::shared_ptr<const dedup_index>> dedup_index::open(const std::string& path) {
  fs::path dir = path;
  std::error_code ec;
  if (!fs::exists(dir / "manifest.json", ec) && fs::exists(dir / "index" / "manifest.json", ec)) {
    dir /= "index";
  }
  if (!fs::exists(dir / "manifest.json", ec)) {
    return make_error(errc::not_found, path +
                                           " holds no dedup index (no manifest.json there or in " +
                                           (fs::path(path) / "index").string() +
                                           "; a run writes one unless --no-index)");
  }
  auto p = std::make_unique<impl>();
  p->name = path;
  p->directory = dir.string();
  std::string text;
  if (auto st = read_text(dir / "manifest.json", text); !st) return std::move(st).error();
  uint64_t sizes[column_count] = {}, sums[column_count] = {};
  bool present[column_count] = {};
  index_manifest m;
  if (auto st = parse_manifest(dir / "manifest.json", text, m, sizes, sums, present); !st) {
    return std::move(st).error();
  }
  p->documents = m.documents;
  p->bands = m.bands;
  p->profile = std::move(m.profile);
  p->sources = std::move(m.sources);
  p->bytes = p->manifest_bytes = text.size();
  const uint64_t n = p->documents;
  const uint64_t fixed_width[column_count] = {8, 1, 8, 8, 8, 0, 8, 0, 8, 8 * p->bands};
  for (std::size_t c = 0; c < column_count; ++c) {
    if (!present[c]) continue;
    const fs::path file = dir / kFileNames[c];
    if (auto st = map_file(file, p->files[c]); !st) return std::move(st).error();
    const uint64_t size = p->files[c].size;
    const auto corrupt = [&](const std::string& what) {
      return make_error(errc::corrupt_data, file.string() + " is damaged: " + what);
    };
    if (size != sizes[c]) {
      return corrupt(std::to_string(size) + " bytes, the manifest says " +
                     std::to_string(sizes[c]));
    }
    if (fixed_width[c] != 0 && size != n * fixed_width[c]) {
      return corrupt(std::to_string(size) + " bytes for " + std::to_string(n) + " documents");
    }
    if (XXH3_64bits(p->files[c].data, size) != sums[c]) {
      return corrupt("its checksum does not match the manifest's");
    }
    p->bytes += size;
  }
  // Offsets rise to the end of their file, so every id and array lies inside it.
  for (const auto& [ends, data, width] :
       {std::tuple{c_id_ends, c_id_text, std::size_t{1}}, {c_shingle_ends, c_shingles, 4}}) {
    const auto e = p->column<uint64_t>(ends);
    uint64_t last = 0;
    for (const uint64_t v : e) {
      if (v < last) {
        return make_error(errc::corrupt_data,
                          (dir / kFileNames[ends]).string() + " is damaged: offsets go down");
      }
      last = v;
    }
    if (last * width != p->files[data].size) {
      return make_error(errc::corrupt_data, (dir / kFileNames[ends]).string() +
                                                " is damaged: it does not end where " +
                                                kFileNames[data] + " does");
    }
  }
  return std::shared_ptr<const dedup_index>(new dedup_index(std::move(p)));
}

dedup_index::dedup_index(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
dedup_index::~dedup_index() = default;

const std::string& dedup_index::name() const noexcept {
  return impl_->name;
}
const std::string& dedup_index::directory() const noexcept {
  return impl_->directory;
}
uint64_t dedup_index::size() const noexcept {
  return impl_->documents;
}
const index_profile& dedup_index::profile() const noexcept {
  return impl_->profile;
}
std::size_t dedup_index::bands() const noexcept {
  return impl_->bands;
}
const std::vector<std::string>& dedup_index::sources() const noexcept {
  return impl_->sources;
}
uint64_t dedup_index::bytes() const noexcept {
  return impl_->bytes;
}
uint64_t dedup_index::verification_bytes() const noexcept {
  return impl_->files[c_shingles].size + impl_->files[c_shingle_ends].size +
         impl_->files[c_bands].size;
}
uint64_t dedup_index::manifest_bytes() const noexcept {
  return impl_->manifest_bytes;
}
uint64_t dedup_index::id_bytes() const noexcept {
  return impl_->files[c_id_text].size + impl_->files[c_id_ends].size;
}
std::span<const uint64_t> dedup_index::fingerprints() const noexcept {
  return impl_->column<uint64_t>(c_fingerprints);
}
bool dedup_index::has_fingerprint(uint64_t j) const noexcept {
  return impl_->files[c_flags].data[j] & kHasFingerprint;
}
std::span<const uint64_t> dedup_index::url_keys() const noexcept {
  return impl_->column<uint64_t>(c_url);
}
std::span<const uint64_t> dedup_index::title_keys() const noexcept {
  return impl_->column<uint64_t>(c_title);
}
std::span<const uint64_t> dedup_index::content_keys() const noexcept {
  return impl_->column<uint64_t>(c_content);
}
std::span<const uint64_t> dedup_index::band_keys() const noexcept {
  return impl_->column<uint64_t>(c_bands);
}
std::span<const uint32_t> dedup_index::shingles(uint64_t j) const noexcept {
  const auto ends = impl_->column<uint64_t>(c_shingle_ends);
  const uint64_t begin = j == 0 ? 0 : ends[j - 1];
  return impl_->column<uint32_t>(c_shingles).subspan(begin, ends[j] - begin);
}
std::string_view dedup_index::id(uint64_t j) const noexcept {
  const auto ends = impl_->column<uint64_t>(c_id_ends);
  const uint64_t begin = j == 0 ? 0 : ends[j - 1];
  return {reinterpret_cast<const char*>(impl_->files[c_id_text].data) + begin, ends[j] - begin};
}
bool dedup_index::id_is_number(uint64_t j) const noexcept {
  return impl_->files[c_flags].data[j] & kIdIsNumber;
}

index_document dedup_index::document(uint64_t j) const noexcept {
  index_document d;
  d.fingerprint = fingerprints()[j];
  d.has_fingerprint = has_fingerprint(j);
  d.url_key = url_keys()[j];
  d.title_key = title_keys()[j];
  d.content_key = content_keys()[j];
  d.id = id(j);
  d.id_is_number = id_is_number(j);
  d.shingles = shingles(j);
  if (impl_->bands > 0) d.band_keys = band_keys().subspan(j * impl_->bands, impl_->bands);
  return d;
}

namespace {

std::string profile_value(const index_profile& p, std::string_view name) {
  for (const auto& [n, v] : p) {
    if (n == name) return v;
  }
  return "(none)";
}

error_info profile_difference(const std::string& index, const std::string& name,
                              const std::string& theirs, const std::string& ours) {
  return make_error(errc::invalid_argument,
                    "the index " + index + " was built with " + name + " " + theirs +
                        ", this run uses " + ours +
                        ": fingerprints and sketches of different settings cannot be "
                        "compared; run with the index's settings");
}

// Every setting equal, in the same order (merge: one index holds one profile).
status same_profile(const std::string& index, const index_profile& mine, const index_profile& run) {
  for (std::size_t i = 0; i < std::max(mine.size(), run.size()); ++i) {
    const std::string name = i < run.size() ? run[i].first : mine[i].first;
    const std::string theirs = i < mine.size() && mine[i].first == name ? mine[i].second : "(none)";
    const std::string ours = i < run.size() && run[i].first == name ? run[i].second : "(none)";
    if (theirs != ours) return profile_difference(index, name, theirs, ours);
  }
  return {};
}

}  // namespace

std::size_t dedup_index::max_hashes() const noexcept {
  const std::string v = profile_value(impl_->profile, "verify.max_hashes");
  std::size_t cap = 0;
  std::from_chars(v.data(), v.data() + v.size(), cap);
  return cap;
}

status dedup_index::check_profile(const index_profile& run) const {
  const index_profile& mine = impl_->profile;
  // By name, the index's settings first: verify.max_hashes may differ (the two sides are compared
  // over the smaller cap, against.cpp), and so may minhash.* when the index holds no band keys
  // (it then gives no MinHash candidates); everything else decides what a fingerprint or a
  // shingle means, or is a decision the index's documents were kept under.
  std::vector<std::string> names;
  for (const auto& [name, value] : mine) names.push_back(name);
  for (const auto& [name, value] : run) {
    if (profile_value(mine, name) == "(none)") names.push_back(name);
  }
  for (const std::string& name : names) {
    if (name == "verify.max_hashes") continue;
    if (impl_->bands == 0 && name.starts_with("minhash.")) continue;
    const std::string theirs = profile_value(mine, name), ours = profile_value(run, name);
    if (theirs != ours) return profile_difference(impl_->name, name, theirs, ours);
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Merging

status merge_dedup_indexes(std::span<const std::shared_ptr<const dedup_index>> inputs,
                           const std::string& out_dir) {
  if (inputs.empty()) return make_error(errc::invalid_argument, "no index to merge");
  for (const auto& in : inputs.subspan(1)) {
    if (auto st = same_profile(in->name(), in->profile(), inputs.front()->profile()); !st) {
      return st;
    }
  }
  auto writer =
      dedup_index_writer::create(out_dir, inputs.front()->profile(), inputs.front()->bands());
  if (!writer) return std::move(writer).error();
  // A merge that fails leaves nothing behind (a directory without a manifest is no index).
  const auto fail = [&](status st) {
    std::error_code ec;
    fs::remove_all(out_dir, ec);
    return st;
  };
  std::vector<std::string> sources;
  for (const auto& in : inputs) {
    for (uint64_t j = 0; j < in->size(); ++j) {
      if (auto st = writer->add(in->document(j)); !st) return fail(std::move(st));
    }
    sources.insert(sources.end(), in->sources().begin(), in->sources().end());
  }
  if (auto st = writer->finish(sources); !st) return fail(std::move(st));
  return {};
}

}  // namespace simdup
