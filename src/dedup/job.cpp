// The dedup job, phase by phase: read and sign (job_input: a pipeline whose ordered last stage
// hands each chunk to consume()); the exact layers, applied by the engine as documents arrive
// (stream mode also runs the near layer then and writes each record at once); in batch mode the
// near layer, verification and clustering (batch_deduplicator::finish), then a second read of
// the inputs that writes the records in their original bytes, so memory holds signatures,
// never texts; the report's clusters (report_samples); the outputs (job_output).
#include <simdup/dedup_job.hpp>

#include "dedup/against.hpp"
#include "dedup/job_index.hpp"
#include "dedup/job_input.hpp"
#include "dedup/job_output.hpp"
#include "dedup/phase_memory.hpp"
#include "dedup/progress.hpp"
#include "dedup/report_samples.hpp"
#include "dedup/run_journal.hpp"
#include "util/cpu.hpp"
#include "util/describe_bytes.hpp"

#include <simdup/dedup_index.hpp>
#include <simdup/json.hpp>

#include <sys/resource.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

namespace simdup {
namespace {

using clock_type = std::chrono::steady_clock;
using detail::interrupted_error;
using detail::sample_collector;
using detail::stop_requested;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The process's peak RSS: the highest of /proc's high-water mark and every phase's peak. The
// kernel sums its per-CPU RSS counters approximately and updates the high-water mark lazily, so
// each source alone may read a little below another's earlier reading. getrusage's ru_maxrss
// only stands in without /proc: it keeps the peak of the process image before execve, so a run
// started from a large process (a Python pipeline) would report that process's peak.
uint64_t peak_rss_bytes(const std::vector<std::pair<std::string, uint64_t>>& by_phase) {
  uint64_t peak = detail::phase_memory::process_peak();
  if (peak == 0) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    peak = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  }
  for (const auto& [name, bytes] : by_phase) peak = std::max(peak, bytes);
  return peak;
}

std::string threads_named(unsigned threads) {
  const unsigned n = threads ? threads : detail::available_cpus();
  return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

class job {
 public:
  job(const dedup_job_options& o, std::FILE* log) : o_(o), log_(log), clusters_(o.report_members) {}

  result<dedup_summary> run();
  /// After a failed run: keeps the journal when the failure may pass (a full disk, a stop, the
  /// memory limit) and says where it waits for --resume.
  void note_resumable(const error_info& error);

 private:
  status open_journal();
  status replay_journal(detail::resume_point& point);
  result<std::vector<dedup_decision>> decide();
  void take_engine_counts(const detail::journal_decisions& counts);
  status consume(detail::chunk& c);
  status handle_bad(const detail::bad_entry& e);
  status decide_stream(document& doc, const dedup_decision& d, uint32_t ordinal,
                       std::string_view csv);
  status finish_batch();
  status finish_stream();
  status pass_two(const std::vector<dedup_decision>& decisions, sample_collector& samples);
  status reread_samples(sample_collector& samples);
  void fill_parameters();
  status open_against(dedup_options& engine_options);
  status write_against_hits(const std::vector<dedup_decision>& decisions);
  status write_index();
  status check_memory();
  // Bytes the engine wrote under --tmp-dir so far (shingle arrays, columns).
  uint64_t spilled_so_far() const {
    if (batch_) return batch_->spilled_bytes() + batch_->column_spilled_bytes();
    return stream_ ? stream_->spilled_bytes() : 0;
  }
  // Ends a phase begun at `start`: its seconds and peak RSS go to the summary.
  void end_phase(const char* name, clock_type::time_point start);

  const dedup_job_options& o_;
  std::FILE* log_;
  dedup_summary summary_;
  std::optional<detail::job_input> input_;
  std::optional<detail::job_output> output_;
  std::optional<detail::progress_meter> progress_;
  std::optional<stream_deduplicator> stream_;
  std::optional<batch_deduplicator> batch_;
  detail::stream_clusters clusters_;              // stream mode
  std::vector<dedup_decision> stream_decisions_;  // of the current chunk
  std::vector<std::shared_ptr<const dedup_index>> against_;
  std::optional<detail::index_stage> index_stage_;
  // The resume journal (batch mode with files); replaying_ while its chunks are consumed again.
  std::optional<detail::run_journal> journal_;
  bool resuming_ = false;
  bool replaying_ = false;
  std::vector<bool> kept_;  // by ordinal, for the index
  uint32_t ordinal_ = 0;
  uint64_t errors_printed_ = 0;
  // --memory-limit: what reading and signing hold besides the engine (0: no limit).
  uint64_t reserve_bytes_ = 0;
  uint64_t resident_at_start_ = 0;
  detail::phase_memory phase_memory_;
};

void job::end_phase(const char* name, clock_type::time_point start) {
  summary_.seconds_by_phase.emplace_back(name, seconds_since(start));
  if (const uint64_t peak = phase_memory_.end_phase(); peak != 0) {
    summary_.peak_rss_by_phase.emplace_back(name, peak);
  }
}

status job::handle_bad(const detail::bad_entry& e) {
  if (!o_.skip_bad_records) {
    // The reader names the record and what is wrong with it; the run stops here.
    return make_error(e.error.code,
                      "stopped at " + e.error.message + "; --on-error skip skips such records");
  }
  // Counts are of records: an input that could not be read is a skipped input, not a record.
  if (e.input) {
    ++summary_.skipped_inputs;
  } else {
    ++summary_.skipped;
    ++summary_.read;
  }
  ++summary_.skipped_reasons[e.reason];
  // A replayed chunk's messages were printed by the run that read it.
  if (log_ && errors_printed_++ < o_.max_error_messages && !replaying_) {
    std::fprintf(log_, "simdup dedup: skipped: %s\n", e.error.message.c_str());
  }
  return {};
}

status job::decide_stream(document& doc, const dedup_decision& d, uint32_t ordinal,
                          std::string_view csv) {
  count_decision(summary_, d, ordinal);
  if (auto st = output_->write(ordinal, doc, d, csv); !st) return st;
  if (index_stage_) kept_.push_back(d.kept(ordinal));
  if (d.kept(ordinal)) {
    output_->ids().add(doc.id, doc.id_is_number);
  } else {
    output_->ids().add("", false);  // dropped documents are never named as a representative
    clusters_.add_duplicate(ordinal, d);
  }
  return {};
}

// Document i's candidate sketch in a replayed chunk (empty without exact verification).
std::span<const uint8_t> replayed_sketch(const detail::chunk& c, std::size_t i) {
  const std::size_t width = c.count ? c.sketches.size() / c.count : 0;
  return std::span<const uint8_t>(c.sketches).subspan(i * width, width);
}

status job::consume(detail::chunk& c) {
  for (const detail::bad_entry& e : c.bad) {
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
    input_->restore_stdin_name(doc);
    ++summary_.read;
    summary_.invalid_utf8 += sig.invalid_utf8;
    if (!sig.has_fingerprint) ++summary_.short_documents;
    const uint32_t ordinal = ordinal_++;
    if (index_stage_) {
      if (auto st = index_stage_->add(sig); !st) return st;
    }
    if (stream_) {
      if (auto st = decide_stream(doc, stream_decisions_[i], ordinal, c.csv_header(i)); !st) {
        return st;
      }
    } else {
      output_->ids().add(doc.id, doc.id_is_number);
      // The engine reads the signature and leaves it as it was (but band keys it zeroes for a
      // text seen before, which it zeroes again when replayed): the journal takes it after.
      auto st = replaying_ ? batch_->add_replayed(std::move(sig), c.shingle_counts[i],
                                                  replayed_sketch(c, i))
                           : batch_->add(std::move(sig));
      if (!st) return st;
    }
  }
  if (journal_ && !replaying_) {
    // Once the shingle file holds the chunk's arrays: a journaled chunk never lacks them.
    if (auto st = batch_->flush_shingles(); !st) return st;
    const auto added = static_cast<uint32_t>(c.count);
    if (auto st = batch_->candidate_sketches(ordinal_ - added, added, c.sketches); !st) return st;
    if (auto st = journal_->append(c, batch_->spilled_bytes()); !st) return st;
  }
  summary_.bytes = c.bytes;
  progress_->update(replaying_ ? "resuming" : "reading", summary_.read, c.bytes, c.input_bytes,
                    spilled_so_far());
  return check_memory();
}

// Under --memory-limit: what stays in memory per document (the engine's state, the ids) must
// fit beside reading's working set; a run that outgrows it stops with the numbers.
status job::check_memory() {
  if (o_.memory_limit == 0) return {};
  const uint64_t held =
      (batch_ ? batch_->memory_bytes() : stream_->memory_bytes()) + output_->ids().memory_bytes();
  if (held + reserve_bytes_ + resident_at_start_ <= o_.memory_limit) return {};
  const std::string limit = detail::describe_bytes(o_.memory_limit, false);
  return invalid_parameter(
      {.name = "memory_limit",
       .value = limit,
       .allowed = "more memory for this input",
       .reason = limit + " is too small for this input: after " + std::to_string(summary_.read) +
                 " documents the state that stays in memory (fingerprints, exact-layer keys, "
                 "ids, keep data, verification offsets: about 70 bytes per document and the "
                 "ids, and a few MiB of buffers) takes " +
                 detail::describe_bytes(held, true) + " beside reading's " +
                 detail::describe_bytes(reserve_bytes_, true) + " and the " +
                 detail::describe_bytes(resident_at_start_, true) +
                 " the process held before reading"},
      {}, errc::too_large);
}

status job::pass_two(const std::vector<dedup_decision>& decisions, sample_collector& samples) {
  const detail::id_store& ids = output_->ids();
  if (!output_->has_files()) {
    // Only decisions are written: the ids are in memory, the source need not be read again.
    for (uint32_t i = 0; i < decisions.size(); ++i) {
      if ((i & 0xfff) == 0 && stop_requested(o_.stop)) return interrupted_error();
      const dedup_decision& d = decisions[i];
      if (auto st = o_.decisions->write(i, ids.id(i), d, ids.id(d.representative)); !st) {
        return st;
      }
    }
    return {};
  }
  auto opened = input_->open_records();
  if (!opened) return std::move(opened).error();
  record_source& in = **opened;
  document doc;
  error_info err;
  uint32_t ordinal = 0;
  progress_->update("writing", 0, 0, 0);  // the pass's rate and ETA count from here
  for (;;) {
    const read_status rs = in.next(doc, err);
    if (rs == read_status::end) break;
    if (rs == read_status::bad_record) continue;  // counted in pass 1
    if (rs == read_status::failed) return err;
    if (stop_requested(o_.stop)) return interrupted_error();
    if (ordinal >= decisions.size()) {
      return make_error(errc::io_error, "input changed during the run: more records in pass 2");
    }
    input_->restore_stdin_name(doc);
    if (samples.wants(ordinal)) samples.take(ordinal, doc);
    if (o_.decisions && doc.id != ids.id(ordinal)) {
      return make_error(errc::io_error, "input changed during the run: record " +
                                            std::to_string(ordinal + 1) + " is now id " + doc.id +
                                            " in pass 2");
    }
    if (auto st = output_->write(ordinal, doc, decisions[ordinal], in.header()); !st) return st;
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
  auto opened = input_->open_records();
  if (!opened) return std::move(opened).error();
  document doc;
  error_info err;
  uint32_t ordinal = 0;
  for (;;) {
    const read_status rs = (*opened)->next(doc, err);
    if (rs == read_status::end || rs == read_status::failed) break;
    if (stop_requested(o_.stop)) return interrupted_error();
    if (rs == read_status::bad_record) continue;
    input_->restore_stdin_name(doc);
    samples.take(ordinal, doc);
    if (ordinal++ == *last) break;
  }
  return {};
}

// The decisions: those an interrupted run saved in its journal, or the engine's (saved for a
// later --resume), with the engine's counts.
result<std::vector<dedup_decision>> job::decide() {
  if (resuming_) {
    if (auto saved = journal_->load_decisions(batch_->size())) {
      take_engine_counts(*saved);
      summary_.replayed_decisions = true;
      return std::move(saved->decisions);
    }
  }
  if (o_.memory_limit != 0) {
    // Reading is over: the near layer may use its working set; the ids and what the process
    // held at the start stay.
    batch_->set_memory_limit(o_.memory_limit, output_->ids().memory_bytes() + resident_at_start_);
  }
  auto decided = batch_->finish([&](std::string_view phase) {
    progress_->update(phase, summary_.read, summary_.bytes, 0, spilled_so_far());
  });
  if (!decided) return std::move(decided).error();
  if (stop_requested(o_.stop)) return interrupted_error();
  const std::size_t decisions_bytes = decided->size() * sizeof(dedup_decision);
  detail::journal_decisions made{
      .decisions = std::move(decided).value(),
      .candidate_pairs = batch_->candidate_pairs(),
      .rejected_pairs = batch_->rejected_pairs(),
      .prefiltered_pairs = batch_->prefiltered_pairs(),
      .minhash_pairs = batch_->minhash_candidate_pairs(),
      .engine_memory_bytes =
          batch_->memory_bytes() + output_->ids().memory_bytes() + decisions_bytes,
      .verify_spill_bytes = batch_->spilled_bytes(),
      .column_spill_bytes = batch_->column_spilled_bytes(),
      .against_candidate_pairs = batch_->against_candidate_pairs()};
  take_engine_counts(made);
  if (journal_) {
    if (auto st = journal_->save_decisions(made); !st) return std::move(st).error();
  }
  return std::move(made.decisions);
}

void job::take_engine_counts(const detail::journal_decisions& counts) {
  summary_.candidate_pairs = counts.candidate_pairs;
  summary_.rejected_pairs = counts.rejected_pairs;
  summary_.prefiltered_pairs = counts.prefiltered_pairs;
  summary_.minhash_pairs = counts.minhash_pairs;
  summary_.engine_memory_bytes = counts.engine_memory_bytes;
  summary_.verify_spill_bytes = counts.verify_spill_bytes;
  summary_.column_spill_bytes = counts.column_spill_bytes;
  summary_.against_candidate_pairs = counts.against_candidate_pairs;
}

// Near layer, verification and clusters, then the second read that writes the records.
status job::finish_batch() {
  auto phase_start = clock_type::now();
  auto decided = decide();
  if (!decided) return std::move(decided).error();
  const std::vector<dedup_decision>& decisions = *decided;
  for (uint32_t i = 0; i < decisions.size(); ++i) count_decision(summary_, decisions[i], i);
  if (index_stage_) {
    kept_.resize(decisions.size());
    for (uint32_t i = 0; i < decisions.size(); ++i) kept_[i] = decisions[i].kept(i);
  }
  if (!against_.empty()) {
    if (auto st = write_against_hits(decisions); !st) return st;
  }
  end_phase("near pairs, verification, clusters", phase_start);
  phase_start = clock_type::now();
  sample_collector samples(
      detail::batch_sample_clusters(decisions, summary_, o_.report_clusters, o_.report_members),
      o_.dedup.detection.fingerprint.normalize.html);
  if (auto st = pass_two(decisions, samples); !st) return st;
  end_phase("write kept records and duplicates", phase_start);
  summary_.samples = samples.build([&](uint32_t i) { return decisions[i]; });
  return {};
}

// Everything was decided and written while reading; the report's sample texts are read again.
status job::finish_stream() {
  summary_.engine_memory_bytes = stream_->memory_bytes() + output_->ids().memory_bytes();
  summary_.candidate_pairs = stream_->candidate_pairs();
  summary_.rejected_pairs = stream_->rejected_pairs();
  summary_.verify_spill_bytes = stream_->spilled_bytes();
  sample_collector samples(clusters_.sample_clusters(summary_, o_.report_clusters),
                           o_.dedup.detection.fingerprint.normalize.html);
  if (input_->has_stdin()) {
    summary_.samples_note =
        "Sample texts are not shown: stream mode read stdin once and keeps no texts.";
  } else if (output_->has_files()) {
    const auto phase_start = clock_type::now();
    if (auto st = reread_samples(samples); !st) return st;
    end_phase("report samples", phase_start);
    const auto member_decisions = clusters_.member_decisions();
    summary_.samples = samples.build([&](uint32_t i) { return member_decisions.at(i); });
  }
  return {};
}

status job::open_against(dedup_options& engine_options) {
  if (o_.against.size() > 255) {
    const std::string count = std::to_string(o_.against.size());
    return invalid_parameter({.name = "against",
                              .value = count,
                              .allowed = "at most 255 indexes",
                              .reason = ": at most 255 indexes, got " + count});
  }
  if (!o_.against.empty() && o_.dedup.mode == dedup_mode::stream) {
    return detail::against_needs_batch();
  }
  const index_profile profile = make_index_profile(o_.dedup);
  for (const std::string& path : o_.against) {
    auto index = dedup_index::open(path);
    if (!index) return std::move(index).error();
    if (auto st = (*index)->check_profile(profile); !st) return st;
    summary_.against.push_back({.name = path, .documents = (*index)->size()});
    against_.push_back(std::move(index).value());
  }
  engine_options.against = against_;
  summary_.against_only = o_.dedup.against_only;
  output_->set_against(against_);
  return {};
}

// DIR/against_hits.jsonl: each index document that documents were dropped for, most hit first.
status job::write_against_hits(const std::vector<dedup_decision>& decisions) {
  std::unordered_map<uint64_t, uint64_t> hits;  // (index << 32 | document) -> dropped for it
  for (const dedup_decision& d : decisions) {
    if (d.against == 0) continue;
    ++hits[uint64_t{d.against} << 32 | d.representative];
    ++summary_.against[d.against - 1].dropped;
  }
  std::vector<std::pair<uint64_t, uint64_t>> sorted(hits.begin(), hits.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (!output_->has_files()) return {};
  auto out = detail::file_sink::open(output_->staging_path() / "against_hits.jsonl", false);
  if (!out) return std::move(out).error();
  std::string line;
  for (const auto& [key, n] : sorted) {
    const std::size_t x = (key >> 32) - 1;
    const auto j = static_cast<uint32_t>(key);
    ++summary_.against[x].documents_hit;
    line.clear();
    json::writer w(line);
    w.begin_object().key("index").value(against_[x]->name());
    w.key("id").id(against_[x]->id(j), against_[x]->id_is_number(j));
    w.key("hits").value(n).end_object();
    line.push_back('\n');
    if (auto st = out->write(line); !st) return st;
  }
  return out->close();
}

status job::write_index() {
  const auto phase_start = clock_type::now();
  progress_->update("writing the index", summary_.read, summary_.bytes, 0);
  const auto shingles = [&](uint32_t i, std::vector<uint32_t>& out) {
    return batch_ ? batch_->shingles(i, out) : stream_->shingles(i, out);
  };
  auto st = index_stage_->write(output_->staging_path() / "index", o_.dedup, kept_, output_->ids(),
                                shingles, summary_.inputs, summary_);
  end_phase("write the index", phase_start);
  return st;
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
  if (o_.out_dir.empty() && !o_.decisions) {
    return make_error(errc::invalid_argument, "no output: give an output directory");
  }
  auto output = detail::job_output::create(o_, log_);
  if (!output) return std::move(output).error();
  output_.emplace(std::move(output).value());
  const std::filesystem::path staging = output_->staging_path();

  // Batch mode reads its input twice; stdin is kept in the staging directory meanwhile.
  const bool reread = o_.dedup.mode == dedup_mode::batch && output_->has_files();
  auto input = detail::job_input::open(o_, reread ? staging : std::filesystem::path());
  if (!input) return std::move(input).error();
  input_.emplace(std::move(input).value());
  summary_.input_count = input_->paths().size();

  auto signer = document_signer::create(o_.dedup);
  if (!signer) return std::move(signer).error();
  // Verification spills shingle arrays to a temporary file, by default in the staging
  // directory (next to the output, so it goes away with a failed run); without one, in the
  // system's temporary directory.
  dedup_options engine_options = o_.dedup;
  if (auto& verify = engine_options.detection.verify; verify && verify->tmp_dir.empty()) {
    verify->tmp_dir = staging.string();
  }
  // What the process holds before the first document (code, libraries, dictionaries; far more
  // under a sanitizer): it stays beside everything the limit bounds.
  resident_at_start_ = detail::phase_memory::resident_bytes();
  summary_.start_rss_bytes = resident_at_start_;
  if (o_.memory_limit != 0) {
    reserve_bytes_ = detail::read_working_bytes(o_.threads);
    // The engine's smallest useful share: its write buffers (shingle store, columns) and
    // first allocations (the pair search runs after reading, in reading's working set).
    const uint64_t smallest = resident_at_start_ + reserve_bytes_ + (uint64_t{8} << 20);
    if (o_.memory_limit < smallest) {
      const std::string limit = detail::describe_bytes(o_.memory_limit, false);
      return invalid_parameter(
          {.name = "memory_limit",
           .value = limit,
           .allowed = "at least " + detail::describe_bytes(smallest, true),
           .reason = limit + " is too small: reading and signing on " + threads_named(o_.threads) +
                     " hold up to " + detail::describe_bytes(reserve_bytes_, true) +
                     " beside the " + detail::describe_bytes(resident_at_start_, true) +
                     " the process holds before reading; the smallest limit for reading is " +
                     detail::describe_bytes(smallest, true)},
          {}, errc::too_large);
    }
    engine_options.memory_limit = o_.memory_limit - reserve_bytes_ - resident_at_start_;
    summary_.memory_limit_bytes = o_.memory_limit;
  }
  if (auto st = open_against(engine_options); !st) return std::move(st).error();
  if (o_.write_index && output_->has_files()) {
    auto stage = detail::index_stage::create(staging);
    if (!stage) return std::move(stage).error();
    index_stage_.emplace(std::move(stage).value());
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
  if (auto st = open_journal(); !st) return std::move(st).error();
  progress_.emplace(o_.progress, log_, input_->total_size());

  std::optional<tbb::global_control> limit;
  if (o_.threads) limit.emplace(tbb::global_control::max_allowed_parallelism, o_.threads);

  phase_memory_.end_phase();  // set-up is not a phase of its own
  auto phase_start = clock_type::now();
  detail::resume_point resume_at;
  if (resuming_) {
    if (auto st = replay_journal(resume_at); !st) {
      progress_->finish();
      return std::move(st).error();
    }
    end_phase("resume from the journal", phase_start);
    phase_start = clock_type::now();
  }
  if (auto st = detail::read_and_sign(
          *input_, *signer, o_, [&](detail::chunk& c) { return consume(c); },
          resuming_ ? &resume_at : nullptr);
      !st) {
    progress_->finish();
    return std::move(st).error();
  }
  if (journal_) summary_.journal_bytes = journal_->bytes();
  end_phase(stream_ ? "read, fingerprint, decide, write" : "read, fingerprint, exact layers",
            phase_start);
  if (auto st = batch_ ? finish_batch() : finish_stream(); !st) return std::move(st).error();
  if (index_stage_) {
    if (auto st = write_index(); !st) return std::move(st).error();
  }
  progress_->finish();
  if (o_.decisions) {
    if (auto st = o_.decisions->finish(); !st) return std::move(st).error();
  }
  summary_.seconds_total = seconds_since(start);
  summary_.peak_rss_bytes = peak_rss_bytes(summary_.peak_rss_by_phase);
  if (!output_->has_files()) return summary_;

  if (auto st = output_->close_files(summary_, input_->paths()); !st) {
    return std::move(st).error();
  }
  input_->remove_spool();
  summary_.seconds_total = seconds_since(start);
  summary_.peak_rss_bytes = peak_rss_bytes(summary_.peak_rss_by_phase);
  if (auto st = output_->commit(summary_); !st) return std::move(st).error();
  return summary_;
}

// The journal lives in the staging directory: a batch run with files keeps one, so that it can
// be resumed whether or not it was started with --resume.
status job::open_journal() {
  // stdin is spooled for the second pass, but a resumed run gets a new stdin.
  const bool journaled =
      o_.dedup.mode == dedup_mode::batch && output_->has_files() && !input_->has_stdin();
  const std::string identity =
      journaled ? detail::journal_identity(o_, summary_, input_->paths()) : std::string();
  if (identity.empty()) {
    if (!o_.resume) return {};
    return invalid_parameter(
        {.name = "resume",
         .value = "on",
         .allowed = "batch mode, an output directory, inputs that can be read again",
         .reason = ": only a batch run with an output directory over files (not stdin or a "
                   "database source) keeps a journal to resume"});
  }
  if (output_->resumed()) {
    // Kept should this run fail before it has its own (e.g. other settings: the user may
    // still resume it with the right ones).
    output_->keep_journal_on_failure(true);
    auto opened = detail::run_journal::open(output_->journal_dir(), identity);
    if (!opened) return std::move(opened).error();
    journal_.emplace(std::move(opened).value());
    if (auto st = batch_->keep_shingles_in(journal_->shingle_file().string(), true); !st) {
      return make_error(st.error().code,
                        "--resume: " + st.error().message + "; run without --resume to start over");
    }
    resuming_ = true;
    return {};
  }
  if (o_.resume && log_ && o_.progress != progress_style::none) {
    std::fprintf(log_,
                 "simdup dedup: --resume: no interrupted run of %s to continue; starting from the "
                 "beginning\n",
                 o_.out_dir.c_str());
  }
  // Verification's arrays stay beside the journal, or in --tmp-dir when one was given (where
  // the user wants the spill), named after the staging directory.
  const auto& verify = o_.dedup.detection.verify;
  const std::filesystem::path shingle_file =
      verify && !verify->tmp_dir.empty()
          ? std::filesystem::absolute(verify->tmp_dir) /
                (output_->staging_path().filename().string() + ".shingles")
          : output_->journal_dir() / "shingles.bin";
  auto created = detail::run_journal::create(output_->journal_dir(), identity, shingle_file);
  if (!created) return std::move(created).error();
  journal_.emplace(std::move(created).value());
  return batch_->keep_shingles_in(shingle_file.string(), false);
}

// Consumes the journal's chunks as if they had just been read and signed.
status job::replay_journal(detail::resume_point& point) {
  std::error_code ec;
  const auto shingle_bytes = std::filesystem::file_size(journal_->shingle_file(), ec);
  replaying_ = true;
  auto st = journal_->replay([&](detail::chunk& c) { return consume(c); }, point,
                             ec ? UINT64_MAX : shingle_bytes);
  replaying_ = false;
  if (!st) return st;
  if (auto ended = batch_->end_replay(); !ended) return ended;
  summary_.replayed_documents = journal_->documents();
  if (log_ && o_.progress != progress_style::none) {
    std::fprintf(log_,
                 "simdup dedup: resuming: %llu documents of the interrupted run taken from its "
                 "journal\n",
                 static_cast<unsigned long long>(journal_->documents()));
  }
  return {};
}

// A failed run keeps its journal when it holds work and the failure may pass: a full disk or
// another I/O error, a stop, a memory limit that was too small. A bad record or a wrong setting
// would fail the resumed run the same way; that journal goes with the staging directory.
void job::note_resumable(const error_info& error) {
  if (!journal_ || !output_) return;
  const bool may_pass =
      error.code == errc::io_error || error.code == errc::no_space || error.code == errc::too_large;
  const bool keep = may_pass && journal_->chunks() > 0;
  output_->keep_journal_on_failure(keep);
  if (!keep || !log_) return;
  std::fprintf(log_,
               "simdup dedup: the %llu documents read so far are kept in %s; the same command "
               "with --resume continues from there\n",
               static_cast<unsigned long long>(journal_->documents()),
               output_->staging_path().c_str());
}

}  // namespace

result<dedup_summary> run_dedup_job(const dedup_job_options& options, std::FILE* log) {
  job j(options, log);
  auto done = j.run();
  if (!done) j.note_resumable(done.error());
  return done;
}

}  // namespace simdup
