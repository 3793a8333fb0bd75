#include "dedup/run_journal.hpp"

#include "util/describe_bytes.hpp"
#include "util/temp_file.hpp"
#include "util/write_errc.hpp"

#include <xxhash.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <system_error>

namespace simdup::detail {
namespace {

namespace fs = std::filesystem;

constexpr char kChunksMagic[8] = {'S', 'D', 'J', 'R', 'N', 'L', '0', '1'};
constexpr char kDecisionsMagic[8] = {'S', 'D', 'D', 'E', 'C', 'I', '0', '1'};
constexpr std::size_t kJournalRecordHeader = 16;  // payload bytes, XXH3-64 of the payload
// A chunk holds at most 256 records of 2 MiB in all, and their signatures: a length beyond this
// is a damaged header, not a chunk.
constexpr uint64_t kJournalMaxPayload = uint64_t{1} << 32;

template <typename T>
void journal_put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const char*>(&v);
  out.append(p, sizeof v);
}

void journal_put_string(std::string& out, std::string_view s) {
  journal_put(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads what journal_put() wrote; every read checks the bounds, so a damaged payload that passed
// its checksum (a bug, or a journal of another build) is an error, never a read past the end.
class journal_reader {
 public:
  explicit journal_reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool get(T& v) {
    if (bytes_.size() - at_ < sizeof v) return false;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  bool get_string(std::string& s) {
    uint32_t n = 0;
    if (!get(n) || bytes_.size() - at_ < n) return false;
    s.assign(bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  template <typename T>
  bool get_array(std::vector<T>& v) {
    uint32_t n = 0;
    if (!get(n) || (bytes_.size() - at_) / sizeof(T) < n) return false;
    v.resize(n);
    if (n != 0) std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return true;
  }
  bool done() const noexcept { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

template <typename T>
void journal_put_array(std::string& out, const std::vector<T>& v) {
  journal_put(out, static_cast<uint32_t>(v.size()));
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

void encode_journal_chunk(const chunk& c, uint64_t shingle_end, std::string& out) {
  journal_put(out, shingle_end);
  journal_put(out, c.framed);
  journal_put(out, c.digest);
  journal_put(out, c.bytes);
  journal_put(out, c.input_bytes);
  journal_put(out, static_cast<uint32_t>(c.bad.size()));
  for (const bad_entry& e : c.bad) {
    journal_put(out, static_cast<int32_t>(e.error.code));
    journal_put(out, static_cast<uint8_t>(e.input));
    journal_put(out, static_cast<uint64_t>(e.before));
    journal_put_string(out, e.error.message);
    journal_put_string(out, e.reason);
  }
  journal_put_array(out, c.sketches);
  journal_put(out, static_cast<uint32_t>(c.count));
  for (std::size_t i = 0; i < c.count; ++i) {
    const document& d = c.docs[i];
    const doc_signature& s = c.sigs[i];
    journal_put_string(out, d.id);
    journal_put(out, static_cast<uint8_t>(d.id_is_number));
    journal_put(out, static_cast<uint8_t>(d.format));
    journal_put(out, s.fingerprint);
    journal_put(out, static_cast<uint8_t>(s.has_fingerprint));
    journal_put(out, s.url_key);
    journal_put(out, s.title_key);
    journal_put(out, s.content_key);
    journal_put(out, s.length);
    journal_put(out, s.time);
    journal_put(out, s.field);
    journal_put(out, s.invalid_utf8);
    journal_put(out, static_cast<uint8_t>(s.html));
    journal_put(out, static_cast<uint32_t>(s.shingles.size()));
    journal_put_array(out, s.band_keys);
  }
}

// The shingle file's size after the chunk: the first field of its payload.
uint64_t journal_shingle_end(std::string_view payload) {
  uint64_t end = UINT64_MAX;
  if (payload.size() >= sizeof end) std::memcpy(&end, payload.data(), sizeof end);
  return end;
}

bool decode_journal_chunk(std::string_view payload, chunk& c) {
  journal_reader r(payload);
  uint32_t bad = 0, count = 0;
  uint64_t shingle_end = 0;
  if (!r.get(shingle_end) || !r.get(c.framed) || !r.get(c.digest) || !r.get(c.bytes) ||
      !r.get(c.input_bytes) || !r.get(bad)) {
    return false;
  }
  c.bad.clear();
  c.csv_headers.clear();
  c.fatal.reset();
  for (uint32_t j = 0; j < bad; ++j) {
    int32_t code = 0;
    uint8_t input = 0;
    uint64_t before = 0;
    bad_entry e{make_error(errc::invalid_input, ""), "", false, 0};
    if (!r.get(code) || !r.get(input) || !r.get(before) || !r.get_string(e.error.message) ||
        !r.get_string(e.reason)) {
      return false;
    }
    e.error.code = static_cast<errc>(code);
    e.input = input != 0;
    e.before = static_cast<std::size_t>(before);
    c.bad.push_back(std::move(e));
  }
  if (!r.get_array(c.sketches) || !r.get(count)) return false;
  if (c.docs.size() < count) {
    c.docs.resize(count);
    c.sigs.resize(count);
  }
  c.count = count;
  c.shingle_counts.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    document& d = c.docs[i];
    doc_signature& s = c.sigs[i];
    uint8_t id_is_number = 0, format = 0, has_fingerprint = 0, html = 0;
    if (!r.get_string(d.id) || !r.get(id_is_number) || !r.get(format) || !r.get(s.fingerprint) ||
        !r.get(has_fingerprint) || !r.get(s.url_key) || !r.get(s.title_key) ||
        !r.get(s.content_key) || !r.get(s.length) || !r.get(s.time) || !r.get(s.field) ||
        !r.get(s.invalid_utf8) || !r.get(html) || !r.get(c.shingle_counts[i]) ||
        !r.get_array(s.band_keys)) {
      return false;
    }
    s.shingles.clear();
    d.id_is_number = id_is_number != 0;
    d.format = static_cast<input_format>(format);
    s.has_fingerprint = has_fingerprint != 0;
    s.html = html != 0;
  }
  return r.done();
}

error_info journal_file_error(const fs::path& path, const char* what, int err) {
  return make_error(err == 0 ? errc::io_error : write_errc(err),
                    std::string("the resume journal: cannot ") + what + " " + path.string() + ": " +
                        std::generic_category().message(err == 0 ? EIO : err));
}

std::vector<std::string> journal_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The whole of a small file of the journal; nullopt when it cannot be opened.
std::optional<std::string> read_journal_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The engine's counts in decisions.bin, in their order there.
constexpr uint64_t journal_decisions::*kDecisionCounts[] = {
    &journal_decisions::candidate_pairs,     &journal_decisions::rejected_pairs,
    &journal_decisions::prefiltered_pairs,   &journal_decisions::minhash_pairs,
    &journal_decisions::engine_memory_bytes, &journal_decisions::verify_spill_bytes,
    &journal_decisions::column_spill_bytes,  &journal_decisions::against_candidate_pairs};

status write_journal_file(const fs::path& path, std::string_view bytes) {
  fs::path temp = path;
  temp += ".new";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return journal_file_error(temp, "create", errno);
  const int err = write_all(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (err != 0) {
    ::unlink(temp.c_str());
    return make_error(write_errc(err), "the resume journal: cannot write " + temp.string() + ": " +
                                           std::generic_category().message(err) + " (" +
                                           std::to_string(bytes.size()) + " bytes needed)");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return journal_file_error(path, "rename to", errno);
  return {};
}

// The "parameters" object of a summary.json, one value a line (a newline after each comma
// outside strings), so that a refusal can name the one that differs.
std::string parameter_lines(const std::string& summary) {
  const std::string key = "\"parameters\":";
  std::size_t at = summary.find(key);
  if (at == std::string::npos) return summary;
  at += key.size();
  std::string out;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = at; i < summary.size(); ++i) {
    const char c = summary[i];
    out.push_back(c);
    if (in_string) {
      if (c == '\\' && i + 1 < summary.size()) out.push_back(summary[++i]);
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',') out.push_back('\n');
    if (depth == 0) break;
  }
  out.push_back('\n');
  return out;
}

}  // namespace

result<run_journal> run_journal::create(const fs::path& dir, const std::string& identity,
                                        const fs::path& shingle_file) {
  std::error_code ec;
  remove_journal(dir);
  fs::create_directories(dir, ec);
  if (ec) return journal_file_error(dir, "create", ec.value());
  if (auto st = write_journal_file(dir / "shingles.path", shingle_file.string()); !st) {
    return st.error();
  }
  if (auto st = write_journal_file(dir / "manifest", identity); !st) return st.error();
  const fs::path path = dir / "chunks.bin";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return journal_file_error(path, "create", errno);
  run_journal j(dir, fd);
  j.shingle_file_ = shingle_file;
  if (const int err = write_all(fd, kChunksMagic, sizeof kChunksMagic); err != 0) {
    return journal_file_error(path, "write", err);
  }
  j.end_ = sizeof kChunksMagic;
  return j;
}

result<run_journal> run_journal::open(const fs::path& dir, const std::string& identity) {
  const auto written = read_journal_file(dir / "manifest");
  if (!written) return make_error(errc::not_found, "no resume journal in " + dir.string());
  if (*written != identity) {
    const auto was = journal_lines(*written), now = journal_lines(identity);
    std::size_t i = 0;
    while (i < was.size() && i < now.size() && was[i] == now[i]) ++i;
    const std::string before = i < was.size() ? was[i] : "(nothing)";
    const std::string after = i < now.size() ? now[i] : "(nothing)";
    return make_error(errc::invalid_argument,
                      "--resume: the interrupted run had other settings or inputs, so its work "
                      "cannot be reused (it had \"" +
                          before + "\", this run has \"" + after +
                          "\"); run without --resume to start over");
  }
  const fs::path path = dir / "chunks.bin";
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return journal_file_error(path, "open", errno);
  run_journal j(dir, fd);
  j.shingle_file_ = read_journal_file(dir / "shingles.path").value_or("");
  char magic[sizeof kChunksMagic];
  if (read_all_at(fd, magic, sizeof magic, 0) != 0 ||
      std::memcmp(magic, kChunksMagic, sizeof magic) != 0) {
    return make_error(errc::corrupt_data, "the resume journal " + path.string() +
                                              " is not a simdup journal (bad header); run "
                                              "without --resume to start over");
  }
  j.end_ = sizeof kChunksMagic;
  return j;
}

status run_journal::replay(const std::function<status(chunk&)>& replay, resume_point& point,
                           uint64_t shingle_file_bytes) {
  const fs::path path = dir_ / "chunks.bin";
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return journal_file_error(path, "stat", errno);
  const auto size = static_cast<uint64_t>(st.st_size);
  chunk c;
  std::string payload;
  uint64_t at = end_;
  while (size - at >= kJournalRecordHeader) {
    uint64_t header[2];
    if (const int err = read_all_at(fd_, header, sizeof header, at); err != 0) {
      return journal_file_error(path, "read", err);
    }
    if (header[0] > kJournalMaxPayload || size - at - kJournalRecordHeader < header[0])
      break;  // cut short
    payload.resize(header[0]);
    if (const int err = read_all_at(fd_, payload.data(), payload.size(), at + kJournalRecordHeader);
        err != 0) {
      return journal_file_error(path, "read", err);
    }
    if (XXH3_64bits(payload.data(), payload.size()) != header[1]) break;  // torn write
    // Its arrays were still in the shingle store's buffer when the process died.
    if (journal_shingle_end(payload) > shingle_file_bytes) break;
    if (!decode_journal_chunk(payload, c)) {
      return make_error(errc::corrupt_data,
                        "the resume journal " + path.string() + " holds a chunk it cannot read " +
                            "(written by another version?); run without --resume to start over");
    }
    if (auto s = replay(c); !s) return s;
    point.chunks.push_back({c.framed, c.digest});
    at += kJournalRecordHeader + payload.size();
    ++chunks_;
    documents_ += c.count;
  }
  end_ = at;
  if (at != size && ::ftruncate(fd_, static_cast<off_t>(at)) != 0) {
    return journal_file_error(path, "truncate", errno);
  }
  return {};
}

status run_journal::append(const chunk& c, uint64_t shingle_end) {
  buffer_.assign(kJournalRecordHeader, '\0');
  encode_journal_chunk(c, shingle_end, buffer_);
  const uint64_t header[2] = {
      buffer_.size() - kJournalRecordHeader,
      XXH3_64bits(buffer_.data() + kJournalRecordHeader, buffer_.size() - kJournalRecordHeader)};
  std::memcpy(buffer_.data(), header, sizeof header);
  if (::lseek(fd_, static_cast<off_t>(end_), SEEK_SET) < 0) {
    return journal_file_error(dir_ / "chunks.bin", "seek in", errno);
  }
  if (const int err = write_all(fd_, buffer_.data(), buffer_.size()); err != 0) {
    // Keep the file whole: a later --resume reads up to the last complete chunk either way.
    [[maybe_unused]] const int ignored = ::ftruncate(fd_, static_cast<off_t>(end_));
    return make_error(write_errc(err),
                      "the resume journal: cannot write " + (dir_ / "chunks.bin").string() + ": " +
                          std::generic_category().message(err) + " (" +
                          describe_bytes(buffer_.size(), true) + " more needed, " +
                          describe_bytes(end_, false) +
                          " written so far; free space and run again with --resume)");
  }
  end_ += buffer_.size();
  ++chunks_;
  documents_ += c.count;
  return {};
}

status run_journal::save_decisions(const journal_decisions& d) {
  std::string out(kDecisionsMagic, sizeof kDecisionsMagic);
  journal_put(out, static_cast<uint64_t>(d.decisions.size()));
  for (const auto count : kDecisionCounts) journal_put(out, d.*count);
  out.reserve(out.size() + d.decisions.size() * 12 + 8);
  for (const dedup_decision& x : d.decisions) {
    journal_put(out, x.representative);
    journal_put(out, static_cast<uint8_t>(x.layer));
    journal_put(out, x.distance);
    journal_put(out, x.against);
    journal_put(out, uint8_t{0});
    journal_put(out, x.jaccard);
  }
  journal_put(out, XXH3_64bits(out.data(), out.size()));
  return write_journal_file(dir_ / "decisions.bin", out);
}

std::optional<journal_decisions> run_journal::load_decisions(uint32_t documents) const {
  const auto read = read_journal_file(dir_ / "decisions.bin");
  if (!read) return std::nullopt;
  const std::string& bytes = *read;
  // The magic, the count, the engine's counts, the decisions (12 bytes each), the checksum.
  const std::size_t expected =
      sizeof kDecisionsMagic + 8 + std::size(kDecisionCounts) * 8 + std::size_t{documents} * 12 + 8;
  if (bytes.size() != expected || std::memcmp(bytes.data(), kDecisionsMagic, 8) != 0) {
    return std::nullopt;
  }
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
  if (XXH3_64bits(bytes.data(), bytes.size() - 8) != sum) return std::nullopt;
  journal_reader r(std::string_view(bytes).substr(8, bytes.size() - 16));
  journal_decisions d;
  uint64_t n = 0;
  if (!r.get(n) || n != documents) return std::nullopt;
  for (const auto count : kDecisionCounts) {
    if (!r.get(d.*count)) return std::nullopt;
  }
  d.decisions.resize(documents);
  for (dedup_decision& x : d.decisions) {
    uint8_t layer = 0, pad = 0;
    if (!r.get(x.representative) || !r.get(layer) || !r.get(x.distance) || !r.get(x.against) ||
        !r.get(pad) || !r.get(x.jaccard)) {
      return std::nullopt;
    }
    x.layer = static_cast<dedup_layer>(layer);
  }
  return d;
}

void remove_journal(const fs::path& dir) {
  std::error_code ec;
  if (const auto file = read_journal_file(dir / "shingles.path"); file && !file->empty()) {
    fs::remove(*file, ec);
  }
  fs::remove_all(dir, ec);
}

run_journal::run_journal(run_journal&& other) noexcept
    : dir_(std::move(other.dir_)),
      shingle_file_(std::move(other.shingle_file_)),
      fd_(other.fd_),
      end_(other.end_),
      chunks_(other.chunks_),
      documents_(other.documents_),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

run_journal::~run_journal() {
  if (fd_ >= 0) ::close(fd_);
}

std::string journal_identity(const dedup_job_options& options, const dedup_summary& parameters,
                             const std::vector<std::string>& inputs) {
  if (options.open_source) return {};
  std::string id = "simdup dedup resume journal, version 1\n";
  // The summary's parameters alone: counts, costs and threads left at zero.
  dedup_summary p;
  describe_parameters(p, options.dedup, options.keep_spec, 0);
  p.inputs = parameters.inputs;
  p.against = parameters.against;
  p.against_only = options.dedup.against_only;
  id += parameter_lines(summary_json(p));
  const field_names& f = options.reader.fields;
  id += "reader format=" + std::string(input_format_name(options.reader.format)) + " id=" + f.id +
        " text=" + f.text + " url=" + f.url + " title=" + f.title + " time=" + f.time +
        " features=" + f.features +
        " max_record_bytes=" + std::to_string(options.reader.max_record_bytes) +
        " on_error=" + (options.skip_bad_records ? "skip" : "fail") + "\n";
  for (const std::string& path : inputs) {
    if (path == "-") return {};
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
    id += "input " + path + " bytes=" + (ec ? "?" : std::to_string(size)) +
          " mtime=" + std::to_string(mtime) + "\n";
  }
  for (const std::string& path : options.against) {
    std::error_code ec;
    const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
    id += "against " + path + " mtime=" + std::to_string(mtime) + "\n";
  }
  return id;
}

}  // namespace simdup::detail
