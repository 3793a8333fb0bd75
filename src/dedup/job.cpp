// The dedup job. Pass 1 is a pipeline: one thread reads chunks of records, all threads sign
// them (normalise, fingerprint, keys, shingles), and one ordered stage decides (stream mode:
// writes kept records and duplicate lines at once) or collects (batch mode). Batch mode then
// clusters and re-reads the inputs to write the records in their original bytes, so memory
// holds signatures, never texts.
#include <simdup/dedup_job.hpp>

#include "dedup/job_parts.hpp"
#include "dedup/output_dir.hpp"
#include "dedup/progress.hpp"
#include "io/byte_source.hpp"

#include <sys/resource.h>
#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace simdup {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using detail::id_store;
using detail::record_writer;
using detail::sample_collector;

constexpr std::size_t kChunkDocs = 256;
constexpr std::size_t kChunkBytes = 2 << 20;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// A bad record or failed input met while reading, with its skipped-reason name.
struct bad_entry {
  error_info error;
  std::string reason;
  bool input = false;  ///< a whole input failed (missing, unreadable, not text), not a record
};

struct chunk {
  std::vector<document> docs;
  std::vector<doc_signature> sigs;
  std::size_t count = 0;
  std::vector<bad_entry> bad;  // bad records (skip mode), in order before/among docs
  // Header rows of the chunk's CSV records, each from record `first` on: a chunk can span CSV
  // inputs whose columns differ.
  struct header_run {
    std::size_t first;
    std::string header;
  };
  std::vector<header_run> csv_headers;
  std::string_view csv_header(std::size_t i) const {
    for (auto it = csv_headers.rbegin(); it != csv_headers.rend(); ++it)
      if (it->first <= i) return it->header;
    return {};
  }
  /// The reader failed (unreadable or truncated input, or a stop): always an error.
  std::optional<error_info> fatal;
  uint64_t bytes = 0;        // decompressed bytes read so far
  uint64_t input_bytes = 0;  // compressed bytes read so far
};

// Chunks are recycled so documents keep their string capacity between chunks.
class chunk_pool {
 public:
  chunk* get() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      owned_.push_back(std::make_unique<chunk>());
      return owned_.back().get();
    }
    chunk* c = free_.back();
    free_.pop_back();
    return c;
  }
  void put(chunk* c) {
    std::lock_guard lock(mutex_);
    free_.push_back(c);
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<chunk>> owned_;
  std::vector<chunk*> free_;
};

// Generated ids of a spooled stdin name the spool file; show "stdin" as the source instead.
void restore_stdin_name(document& doc, const std::string& spool) {
  if (spool.empty() || doc.source != spool) return;
  if (doc.id_generated && doc.id.starts_with(spool)) doc.id.replace(0, spool.size(), "stdin");
  doc.source = "stdin";
}

bool stop_requested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

error_info interrupted_error() {
  return make_error(errc::io_error, "interrupted: stopped before the end");
}

// Copies stdin to `path`. Polls, so that a stop request is seen while stdin is an idle pipe.
status spool_stdin(const fs::path& path, const std::atomic<bool>* stop) {
  auto sink = detail::file_sink::open(path, false);
  if (!sink) return std::move(sink).error();
  std::string buffer(1 << 20, '\0');
  for (;;) {
    auto n = detail::read_fd(STDIN_FILENO, buffer.data(), buffer.size(), "stdin", stop);
    if (!n)
      return stop_requested(stop) ? status(interrupted_error()) : status(std::move(n).error());
    if (*n == 0) break;
    if (auto st = sink->write(std::string_view(buffer).substr(0, *n)); !st) return st;
  }
  return sink->close();
}

uint64_t total_input_size(const std::vector<std::string>& inputs) {
  uint64_t total = 0;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (in == "-" || !fs::is_regular_file(in, ec)) return 0;
    total += fs::file_size(in, ec);
  }
  return total;
}

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// Per-cluster bookkeeping of stream mode for the report: size and the first members.
struct stream_cluster {
  uint64_t size = 1;
  std::vector<std::pair<uint32_t, dedup_decision>> members;
};

class job {
 public:
  job(const dedup_job_options& o, std::FILE* log) : o_(o), log_(log) {}

  result<dedup_summary> run();

 private:
  result<std::unique_ptr<record_source>> open_records();
  status pass_one(const document_signer& signer);
  status consume(chunk& c);
  status handle_bad(const bad_entry& e);
  status decide_stream(document& doc, const dedup_decision& d, uint32_t ordinal,
                       std::string_view csv);
  status pass_two(const std::vector<dedup_decision>& decisions, sample_collector& samples);
  status reread_samples(sample_collector& samples);
  std::vector<sample_collector::cluster> batch_sample_clusters(
      const std::vector<dedup_decision>& decisions);
  std::vector<sample_collector::cluster> stream_sample_clusters();
  void fill_parameters();

  const dedup_job_options& o_;
  std::FILE* log_;
  bool files_ = true;  // an output directory is written (else only o_.decisions)
  dedup_summary summary_;
  std::vector<std::string> inputs_;
  reader_options reader_options_;  // o_.reader plus the skip and stop settings
  std::string spool_;
  std::optional<detail::output_dir> out_;
  std::optional<record_writer> kept_;
  std::optional<record_writer> annotated_;  // --annotate
  std::optional<detail::file_sink> dups_;
  std::optional<detail::progress_meter> progress_;
  std::optional<stream_deduplicator> stream_;
  std::optional<batch_deduplicator> batch_;
  std::unordered_map<uint32_t, stream_cluster> stream_clusters_;
  std::vector<dedup_decision> stream_decisions_;  // of the current chunk
  id_store ids_;
  std::string line_;
  uint32_t ordinal_ = 0;
  uint64_t errors_printed_ = 0;
};

status job::handle_bad(const bad_entry& e) {
  if (!o_.skip_bad_records) {
    return make_error(e.error.code, e.error.message + " (use --on-error skip to skip bad records)");
  }
  // Counts are of records: an input that could not be read is a skipped input, not a record.
  if (e.input) {
    ++summary_.skipped_inputs;
  } else {
    ++summary_.skipped;
    ++summary_.read;
  }
  ++summary_.skipped_reasons[e.reason];
  if (log_ && errors_printed_++ < o_.max_error_messages) {
    std::fprintf(log_, "simdup dedup: skipped: %s\n", e.error.message.c_str());
  }
  return {};
}

status job::decide_stream(document& doc, const dedup_decision& d, uint32_t ordinal,
                          std::string_view csv) {
  count_decision(summary_, d, ordinal);
  const uint32_t rep = d.representative;
  if (o_.decisions) {
    const std::string_view rep_id = d.kept(ordinal) ? std::string_view(doc.id) : ids_.id(rep);
    if (auto st = o_.decisions->write(ordinal, doc.id, d, rep_id); !st) return st;
  }
  if (annotated_) {
    const detail::annotation note{d, d.kept(ordinal) ? std::string_view() : ids_.id(rep),
                                  !d.kept(ordinal) && ids_.is_number(rep), d.kept(ordinal)};
    if (auto st = annotated_->write(doc, csv, &note); !st) return st;
  }
  if (d.kept(ordinal)) {
    ids_.add(doc.id, doc.id_is_number);
    return files_ ? kept_->write(doc, csv) : status();
  }
  ids_.add("", false);  // dropped documents are never named as a representative
  stream_cluster& c = stream_clusters_[rep];
  ++c.size;
  if (c.members.size() < o_.report_members) c.members.emplace_back(ordinal, d);
  if (!files_) return {};
  line_.clear();
  detail::append_duplicate_line(line_, doc.id, doc.id_is_number, ids_.id(rep), ids_.is_number(rep),
                                d);
  return dups_->write(line_);
}

status job::consume(chunk& c) {
  for (const bad_entry& e : c.bad) {
    if (auto st = handle_bad(e); !st) return st;
  }
  if (stream_) {
    // The whole chunk at once: one batch probe of the online index.
    if (auto st = stream_->add(std::span(c.sigs.data(), c.count), stream_decisions_); !st) {
      return st;
    }
  }
  for (std::size_t i = 0; i < c.count; ++i) {
    document& doc = c.docs[i];
    doc_signature& sig = c.sigs[i];
    if (batch_ && o_.dedup.keep.rule == keep_rule::field && doc.format != input_format::jsonl &&
        doc.format != input_format::csv) {
      return make_error(errc::invalid_argument,
                        "--keep field:" + o_.dedup.keep.field +
                            " needs records with named fields (JSONL, or CSV with a header "
                            "row), but " +
                            doc.source + " is " + input_format_name(doc.format));
    }
    restore_stdin_name(doc, spool_);
    ++summary_.read;
    summary_.invalid_utf8 += sig.invalid_utf8;
    if (!sig.has_fingerprint) ++summary_.short_documents;
    const uint32_t ordinal = ordinal_++;
    if (stream_) {
      if (auto st = decide_stream(doc, stream_decisions_[i], ordinal, c.csv_header(i)); !st) {
        return st;
      }
    } else {
      ids_.add(doc.id, doc.id_is_number);
      if (auto st = batch_->add(std::move(sig)); !st) return st;
    }
  }
  summary_.bytes = c.bytes;
  progress_->update("reading", summary_.read, c.bytes, c.input_bytes);
  return {};
}

result<std::unique_ptr<record_source>> job::open_records() {
  if (o_.open_source) return o_.open_source();
  auto opened = reader::open(inputs_, reader_options_);
  if (!opened) return std::move(opened).error();
  return make_file_source(std::move(opened).value());
}

status job::pass_one(const document_signer& signer) {
  auto opened = open_records();
  if (!opened) return std::move(opened).error();
  record_source& in = **opened;
  chunk_pool pool;
  status outcome;
  bool input_done = false;
  const unsigned threads =
      o_.threads ? o_.threads : std::max(1u, std::thread::hardware_concurrency());

  const auto read_chunk = [&](tbb::flow_control& fc) -> chunk* {
    if (input_done) {
      fc.stop();
      return nullptr;
    }
    chunk* c = pool.get();
    c->count = 0;
    c->fatal.reset();
    c->bad.clear();
    c->csv_headers.clear();
    std::size_t bytes = 0;
    error_info err;
    while (c->count < kChunkDocs && bytes < kChunkBytes) {
      if (stop_requested(o_.stop)) {
        c->fatal = interrupted_error();
        input_done = true;
        break;
      }
      if (c->docs.size() == c->count) {
        c->docs.emplace_back();
        c->sigs.emplace_back();
      }
      const read_status rs = in.next(c->docs[c->count], err);
      if (rs == read_status::record) {
        bytes += c->docs[c->count].raw.size();
        // Taken while the record's input is open: at the end of an input the reader forgets it.
        if (c->docs[c->count].format == input_format::csv &&
            (c->csv_headers.empty() || c->csv_headers.back().header != in.header())) {
          c->csv_headers.push_back({c->count, std::string(in.header())});
        }
        ++c->count;
      } else if (rs == read_status::bad_record) {
        c->bad.push_back({err, std::string(in.last_skip_reason()), in.last_skip_was_input()});
        if (!o_.skip_bad_records) break;
      } else {
        // end, or failed: an unreadable or truncated input with --on-error fail, or an
        // interrupted read (with skip, failed inputs come as bad records).
        if (rs == read_status::failed) {
          if (!stop_requested(o_.stop)) err.message += " (--on-error skip skips it and goes on)";
          c->fatal = std::move(err);
        }
        input_done = true;
        break;
      }
    }
    if (!o_.skip_bad_records && !c->bad.empty()) input_done = true;
    c->bytes = in.stats().bytes;
    c->input_bytes = in.stats().compressed_bytes;
    return c;
  };
  const auto sign_chunk = [&](chunk* c) {
    for (std::size_t i = 0; i < c->count; ++i)
      signer.sign(c->docs[i], c->sigs[i], c->csv_header(i));
    return c;
  };
  const auto decide_chunk = [&](chunk* c) {
    // After the first error the remaining chunks are only recycled.
    if (outcome) outcome = c->fatal ? status(*c->fatal) : consume(*c);
    pool.put(c);
  };
  tbb::parallel_pipeline(
      threads * 2 + 2,
      tbb::make_filter<void, chunk*>(tbb::filter_mode::serial_in_order, read_chunk) &
          tbb::make_filter<chunk*, chunk*>(tbb::filter_mode::parallel, sign_chunk) &
          tbb::make_filter<chunk*, void>(tbb::filter_mode::serial_in_order, decide_chunk));
  return outcome;
}

std::vector<sample_collector::cluster> job::batch_sample_clusters(
    const std::vector<dedup_decision>& decisions) {
  const auto n = static_cast<uint32_t>(decisions.size());
  std::vector<uint32_t> sizes(n, 0);
  for (uint32_t i = 0; i < n; ++i) ++sizes[decisions[i].representative];
  std::vector<uint32_t> reps;
  for (uint32_t i = 0; i < n; ++i) {
    if (sizes[i] == 0) continue;
    ++summary_.cluster_sizes[sizes[i]];
    if (sizes[i] > 1) reps.push_back(i);
  }
  const std::size_t top = std::min(o_.report_clusters, reps.size());
  std::partial_sort(
      reps.begin(), reps.begin() + static_cast<std::ptrdiff_t>(top), reps.end(),
      [&](uint32_t a, uint32_t b) { return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : a < b; });
  reps.resize(top);
  std::unordered_map<uint32_t, std::vector<uint32_t>> members;
  for (uint32_t r : reps) members[r];
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = decisions[i].representative;
    if (r == i) continue;
    auto it = members.find(r);
    if (it != members.end() && it->second.size() < 64) it->second.push_back(i);
  }
  std::vector<sample_collector::cluster> out;
  for (uint32_t r : reps) {
    auto& m = members[r];
    // Near duplicates with the largest distance show the most interesting differences.
    std::stable_sort(m.begin(), m.end(), [&](uint32_t a, uint32_t b) {
      const bool na = decisions[a].layer == dedup_layer::near;
      const bool nb = decisions[b].layer == dedup_layer::near;
      if (na != nb) return na;
      return decisions[a].distance > decisions[b].distance;
    });
    m.resize(std::min(m.size(), o_.report_members));
    out.push_back({r, sizes[r], m});
  }
  return out;
}

std::vector<sample_collector::cluster> job::stream_sample_clusters() {
  uint64_t with_duplicates = 0;
  std::vector<uint32_t> reps;
  for (const auto& [rep, c] : stream_clusters_) {
    ++summary_.cluster_sizes[c.size];
    ++with_duplicates;
    reps.push_back(rep);
  }
  if (summary_.kept > with_duplicates) summary_.cluster_sizes[1] += summary_.kept - with_duplicates;
  const std::size_t top = std::min(o_.report_clusters, reps.size());
  std::partial_sort(reps.begin(), reps.begin() + static_cast<std::ptrdiff_t>(top), reps.end(),
                    [&](uint32_t a, uint32_t b) {
                      const uint64_t sa = stream_clusters_[a].size, sb = stream_clusters_[b].size;
                      return sa != sb ? sa > sb : a < b;
                    });
  reps.resize(top);
  std::vector<sample_collector::cluster> out;
  for (uint32_t r : reps) {
    std::vector<uint32_t> members;
    for (const auto& [m, d] : stream_clusters_[r].members) members.push_back(m);
    out.push_back({r, stream_clusters_[r].size, members});
  }
  return out;
}

status job::pass_two(const std::vector<dedup_decision>& decisions, sample_collector& samples) {
  if (!files_) {
    // Only decisions are written: the ids are in memory, the source need not be read again.
    for (uint32_t i = 0; i < decisions.size(); ++i) {
      if ((i & 0xfff) == 0 && stop_requested(o_.stop)) return interrupted_error();
      const dedup_decision& d = decisions[i];
      if (auto st = o_.decisions->write(i, ids_.id(i), d, ids_.id(d.representative)); !st) {
        return st;
      }
    }
    return {};
  }
  auto opened = open_records();
  if (!opened) return std::move(opened).error();
  record_source& in = **opened;
  document doc;
  error_info err;
  uint32_t ordinal = 0;
  for (;;) {
    const read_status rs = in.next(doc, err);
    if (rs == read_status::end) break;
    if (rs == read_status::bad_record) continue;  // counted in pass 1
    if (rs == read_status::failed) return err;
    if (stop_requested(o_.stop)) return interrupted_error();
    if (ordinal >= decisions.size()) {
      return make_error(errc::io_error, "input changed during the run: more records in pass 2");
    }
    restore_stdin_name(doc, spool_);
    const dedup_decision& d = decisions[ordinal];
    if (samples.wants(ordinal)) samples.take(ordinal, doc);
    if (o_.decisions) {
      if (doc.id != ids_.id(ordinal)) {
        return make_error(errc::io_error, "input changed during the run: record " +
                                              std::to_string(ordinal + 1) + " is now id " + doc.id +
                                              " in pass 2");
      }
      const std::string_view rep_id = ids_.id(d.representative);
      if (auto st = o_.decisions->write(ordinal, doc.id, d, rep_id); !st) return st;
    }
    if (annotated_) {
      const detail::annotation note{d, ids_.id(d.representative), ids_.is_number(d.representative),
                                    d.kept(ordinal)};
      if (auto st = annotated_->write(doc, in.header(), &note); !st) return st;
    }
    if (d.kept(ordinal)) {
      if (auto st = kept_->write(doc, in.header()); !st) return st;
    } else {
      line_.clear();
      detail::append_duplicate_line(line_, doc.id, doc.id_is_number, ids_.id(d.representative),
                                    ids_.is_number(d.representative), d);
      if (auto st = dups_->write(line_); !st) return st;
    }
    ++ordinal;
    if ((ordinal & 0xfff) == 0) {
      progress_->update("writing", ordinal, in.stats().bytes, in.stats().compressed_bytes);
    }
  }
  if (ordinal != decisions.size()) {
    return make_error(errc::io_error, "input changed during the run: fewer records in pass 2");
  }
  return {};
}

status job::reread_samples(sample_collector& samples) {
  const auto last = samples.last();
  if (!last) return {};
  auto opened = open_records();
  if (!opened) return std::move(opened).error();
  document doc;
  error_info err;
  uint32_t ordinal = 0;
  for (;;) {
    const read_status rs = (*opened)->next(doc, err);
    if (rs == read_status::end || rs == read_status::failed) break;
    if (stop_requested(o_.stop)) return interrupted_error();
    if (rs == read_status::bad_record) continue;
    restore_stdin_name(doc, spool_);
    samples.take(ordinal, doc);
    if (ordinal++ == *last) break;
  }
  return {};
}

void job::fill_parameters() {
  summary_.inputs = o_.open_source      ? std::vector<std::string>{o_.source_name}
                    : o_.inputs.empty() ? std::vector<std::string>{"-"}
                                        : o_.inputs;
  describe_parameters(summary_, o_.dedup, o_.keep_spec, o_.threads);
}

result<dedup_summary> job::run() {
  const auto start = clock_type::now();
  fill_parameters();
  files_ = !o_.out_dir.empty();
  if (!files_ && !o_.decisions) {
    return make_error(errc::invalid_argument, "no output: give an output directory");
  }
  fs::path dir;  // the staging directory; empty when no files are written
  if (files_) {
    auto out = detail::output_dir::create(o_.out_dir, o_.replace_output);
    if (!out) return std::move(out).error();
    out_.emplace(std::move(out).value());
    for (const fs::path& stale : out_->stale_removed()) {
      if (log_ && o_.progress != progress_style::none) {
        std::fprintf(log_,
                     "simdup dedup: removed %s, the staging directory of a run that was killed\n",
                     stale.c_str());
      }
    }
    dir = out_->temp_path();
  }

  if (!o_.open_source) {
    std::vector<std::string> given = o_.inputs.empty() ? std::vector<std::string>{"-"} : o_.inputs;
    auto expanded = expand_inputs(given, o_.skip_bad_records);
    if (!expanded) {
      return make_error(expanded.error().code,
                        expanded.error().message + " (--on-error skip skips missing inputs)");
    }
    inputs_ = std::move(expanded).value();
  }
  summary_.input_count = inputs_.size();
  reader_options_ = o_.reader;
  reader_options_.skip_failed_inputs = o_.skip_bad_records;
  reader_options_.cancel = o_.stop;
  const bool has_stdin = std::find(inputs_.begin(), inputs_.end(), "-") != inputs_.end();
  if (has_stdin && o_.dedup.mode == dedup_mode::batch && files_) {
    // Batch mode reads its input twice; stdin is kept in the temporary directory meanwhile.
    spool_ = (dir / "stdin.spool").string();
    if (auto st = spool_stdin(spool_, o_.stop); !st) return std::move(st).error();
    std::replace(inputs_.begin(), inputs_.end(), std::string("-"), spool_);
  }

  auto signer = document_signer::create(o_.dedup);
  if (!signer) return std::move(signer).error();
  // Verification spills shingle arrays to a temporary file, by default in the staging
  // directory (next to the output, so it goes away with a failed run); without one, in the
  // system's temporary directory.
  dedup_options engine_options = o_.dedup;
  if (auto& verify = engine_options.detection.verify; verify && verify->tmp_dir.empty() && files_) {
    verify->tmp_dir = dir.string();
  }
  if (o_.dedup.mode == dedup_mode::stream) {
    auto engine = stream_deduplicator::create(engine_options);
    if (!engine) return std::move(engine).error();
    stream_.emplace(std::move(engine).value());
  } else {
    auto engine = batch_deduplicator::create(engine_options);
    if (!engine) return std::move(engine).error();
    batch_.emplace(std::move(engine).value());
  }
  if (files_) {
    kept_.emplace(dir, o_.zstd_output);
    if (o_.annotate) annotated_.emplace(dir, o_.zstd_output, "annotated");
    auto dups = detail::file_sink::open(dir / "duplicates.jsonl", false);
    if (!dups) return std::move(dups).error();
    dups_.emplace(std::move(dups).value());
  }
  progress_.emplace(o_.progress, log_, total_input_size(inputs_));

  std::optional<tbb::global_control> limit;
  if (o_.threads) limit.emplace(tbb::global_control::max_allowed_parallelism, o_.threads);

  auto phase_start = clock_type::now();
  if (auto st = pass_one(*signer); !st) {
    progress_->finish();
    return std::move(st).error();
  }
  summary_.seconds_by_phase.emplace_back(
      stream_ ? "read, fingerprint, decide, write" : "read, fingerprint, exact layers",
      seconds_since(phase_start));

  std::optional<sample_collector> samples;
  if (batch_) {
    phase_start = clock_type::now();
    auto decided = batch_->finish([&](std::string_view phase) {
      progress_->update(phase, summary_.read, summary_.bytes, 0);
    });
    if (!decided) return std::move(decided).error();
    if (stop_requested(o_.stop)) return interrupted_error();
    const std::vector<dedup_decision>& decisions = *decided;
    summary_.candidate_pairs = batch_->candidate_pairs();
    summary_.rejected_pairs = batch_->rejected_pairs();
    summary_.minhash_pairs = batch_->minhash_candidate_pairs();
    summary_.engine_memory_bytes =
        batch_->memory_bytes() + ids_.memory_bytes() + decisions.size() * sizeof(dedup_decision);
    summary_.verify_spill_bytes = batch_->spilled_bytes();
    for (uint32_t i = 0; i < decisions.size(); ++i) count_decision(summary_, decisions[i], i);
    summary_.seconds_by_phase.emplace_back("near pairs, verification, clusters",
                                           seconds_since(phase_start));
    phase_start = clock_type::now();
    samples.emplace(batch_sample_clusters(decisions));
    if (auto st = pass_two(decisions, *samples); !st) return std::move(st).error();
    summary_.seconds_by_phase.emplace_back("write kept records and duplicates",
                                           seconds_since(phase_start));
    summary_.samples = samples->build([&](uint32_t i) { return decisions[i]; });
  } else {
    summary_.engine_memory_bytes = stream_->memory_bytes() + ids_.memory_bytes();
    summary_.candidate_pairs = stream_->candidate_pairs();
    summary_.rejected_pairs = stream_->rejected_pairs();
    summary_.verify_spill_bytes = stream_->spilled_bytes();
    samples.emplace(stream_sample_clusters());
    if (has_stdin) {
      summary_.samples_note =
          "Sample texts are not shown: stream mode read stdin once and keeps no texts.";
    } else if (files_) {
      phase_start = clock_type::now();
      if (auto st = reread_samples(*samples); !st) return std::move(st).error();
      summary_.seconds_by_phase.emplace_back("report samples", seconds_since(phase_start));
      std::unordered_map<uint32_t, dedup_decision> member_decisions;
      for (const auto& [rep, c] : stream_clusters_) {
        for (const auto& [m, d] : c.members) member_decisions[m] = d;
      }
      summary_.samples = samples->build([&](uint32_t i) { return member_decisions.at(i); });
    }
  }
  progress_->finish();
  if (o_.decisions) {
    if (auto st = o_.decisions->finish(); !st) return std::move(st).error();
  }
  summary_.seconds_total = seconds_since(start);
  summary_.peak_rss_bytes = peak_rss_bytes();
  if (!files_) return summary_;

  if (auto st = kept_->close(); !st) return std::move(st).error();
  if (annotated_) {
    if (auto st = annotated_->close(); !st) return std::move(st).error();
  }
  if (auto st = dups_->close(); !st) return std::move(st).error();
  summary_.output_format = kept_->first_format();
  if (summary_.output_format.empty() && !inputs_.empty()) {
    summary_.output_format = input_format_name(o_.reader.format == input_format::auto_detect
                                                   ? format_from_extension(inputs_.front())
                                                   : o_.reader.format);
  }
  // An empty kept file still exists, so consumers can rely on it.
  if (kept_->names().empty()) {
    const std::string ext = summary_.output_format == "auto" || summary_.output_format.empty()
                                ? "jsonl"
                            : summary_.output_format == "text" ? "txt"
                                                               : summary_.output_format;
    auto empty = detail::file_sink::open(dir / ("kept." + ext + (o_.zstd_output ? ".zst" : "")),
                                         o_.zstd_output);
    if (!empty) return std::move(empty).error();
    if (auto st = empty->close(); !st) return std::move(st).error();
  }
  if (!spool_.empty()) fs::remove(spool_);

  summary_.seconds_total = seconds_since(start);
  summary_.peak_rss_bytes = peak_rss_bytes();
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"summary.json", summary_json(summary_)},
        {"report.html", report_html(summary_)}}) {
    auto f = detail::file_sink::open(dir / name, false);
    if (!f) return std::move(f).error();
    if (auto st = f->write(text); !st) return std::move(st).error();
    if (auto st = f->close(); !st) return std::move(st).error();
  }
  // The last point of no return: a stop request before it leaves DIR as it was.
  if (stop_requested(o_.stop)) return interrupted_error();
  if (auto st = out_->commit(); !st) return std::move(st).error();
  return summary_;
}

}  // namespace

result<dedup_summary> run_dedup_job(const dedup_job_options& options, std::FILE* log) {
  job j(options, log);
  return j.run();
}

}  // namespace simdup
