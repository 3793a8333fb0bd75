// `simdup dedup`: decide for every document whether it is a duplicate and say why; writes
// --out DIR (docs/dedup.md). The job itself is the library's run_dedup_job.
#include "command.hpp"
#include "database_options.hpp"
#include "document_job.hpp"
#include "index_options.hpp"
#include "options.hpp"

#include <simdup/dedup_job.hpp>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <thread>

namespace simdup::cli {
namespace {

struct dedup_command {
  input_options input;
  database_options db;
  fingerprint_cli_options fp;
  std::string out;
  bool force = false;
  std::string mode;  // empty: stream for stdin, batch for files
  detection_cli_options detection;
  std::string layers = "url,exact,near";
  std::string keep = "first";
  bool zstd = false;
  bool annotate = false;
  bool duplicates_parquet = false;
  std::vector<std::string> against;
  bool against_only = false;
  bool no_index = false;
  std::string on_error = "fail";
  unsigned threads = 0;
  std::string memory_limit;  // empty: default_memory_limit(); "0": none
  bool quiet = false;
  std::size_t report_clusters = 10;
};

// SIGINT and SIGTERM during a run: the signals are blocked in every thread of the job (worker
// threads inherit the mask) and one watcher thread takes them with sigtimedwait, so no code
// runs in signal context at all. The watcher sets the job's stop flag; the job stops at its
// next check, removes its staging directory and fails, and the command exits 128 + signal.
class signal_watch {
 public:
  signal_watch() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    blocked_ = pthread_sigmask(SIG_BLOCK, &set_, &old_) == 0;
    if (blocked_) thread_ = std::thread([this] { watch(); });
  }
  ~signal_watch() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
    // A signal that came after the last check is still pending: it ends the process with its
    // default action once unblocked, after the result has been committed.
    if (blocked_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;

  const std::atomic<bool>* stop() const { return &stop_; }
  /// The signal received, 0 if none.
  int signal() const { return signal_.load(); }

 private:
  void watch() {
    // Short: the destructor joins this thread, so a run ends up to one tick after its job.
    const timespec tick{0, 10'000'000};
    while (!done_.load()) {
      const int sig = sigtimedwait(&set_, nullptr, &tick);
      // Later signals (a second Ctrl-C) are taken too: the job is already stopping.
      if (sig > 0 && signal_.load() == 0) {
        signal_.store(sig);
        stop_.store(true);
      }
    }
  }

  sigset_t set_{};
  sigset_t old_{};
  bool blocked_ = false;
  std::atomic<bool> done_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> signal_{0};
  std::thread thread_;
};

result<dedup_options> resolve_dedup(const dedup_command& cmd, const fingerprint_options& fp) {
  dedup_options o;
  const bool only_stdin =
      !cmd.db.reads_database() &&
      (cmd.input.inputs.empty() || (cmd.input.inputs.size() == 1 && cmd.input.inputs[0] == "-"));
  const std::string mode = cmd.mode.empty() ? (only_stdin ? "stream" : "batch") : cmd.mode;
  o.mode = mode == "stream" ? dedup_mode::stream : dedup_mode::batch;
  if (auto st = parse_layers(cmd.layers, o); !st) {
    return with_flags(st.error());
  }
  auto keep = parse_keep_policy(cmd.keep);
  if (!keep) return with_flags(keep.error());
  o.keep = std::move(keep).value();
  auto detection = cmd.detection.resolve(fp, o.mode == dedup_mode::batch);
  if (!detection) return std::move(detection).error();
  o.detection = std::move(detection).value();
  return o;
}

// What the summary counts but a user would not look for: an input without records (exit 0: an
// empty shard is a valid input, its output is empty) and text that was not all UTF-8.
void warn_about_input(const dedup_command& cmd, const dedup_summary& s) {
  if (s.read == 0 && s.skipped_inputs == 0) {
    const std::string where =
        cmd.db.reads_database() ? "the database source" : describe_inputs(cmd.input.inputs);
    std::fprintf(stderr, "simdup dedup: warning: no records in %s; the output is empty\n",
                 where.c_str());
  }
  if (s.invalid_utf8 > 0) {
    std::fprintf(stderr,
                 "simdup dedup: warning: %llu invalid UTF-8 sequences replaced by U+FFFD (the "
                 "input is not all UTF-8; summary.json documents.invalid_utf8)\n",
                 static_cast<unsigned long long>(s.invalid_utf8));
  }
}

int run_dedup(const dedup_command& cmd) {
  dedup_job_options job;
  auto reader = cmd.input.resolve();
  auto fp = cmd.fp.resolve();
  auto dedup = fp ? resolve_dedup(cmd, *fp) : result<dedup_options>(fp.error());
  status db = cmd.db.validate(!cmd.input.inputs.empty(), true);
  if (db && cmd.out.empty() && !cmd.db.writes_database()) {
    db = make_error(errc::invalid_argument, "--out is required (or --to)");
  }
  if (db && cmd.against_only && cmd.against.empty()) {
    db = make_error(errc::invalid_argument, "--against-only needs --against DIR");
  }
  if (db && cmd.db.reads_database() && cmd.keep.starts_with("field:")) {
    // The rows reach the job as id, text, url, title and time only.
    db = make_error(errc::invalid_argument,
                    "--keep field:NAME reads JSONL or CSV fields; with --from use first, "
                    "longest, or newest (with --time-column)");
  }
  const result<uint64_t> limit = cmd.memory_limit.empty()
                                     ? result<uint64_t>(default_memory_limit())
                                     : parse_bytes(cmd.memory_limit, "--memory-limit");
  for (const error_info* e : {reader ? nullptr : &reader.error(), fp ? nullptr : &fp.error(),
                              dedup ? nullptr : &dedup.error(), db ? nullptr : &db.error(),
                              limit ? nullptr : &limit.error()}) {
    if (e) {
      print_error("dedup", e->message);
      return exit_usage;
    }
  }
  job.inputs = cmd.input.inputs;
  job.reader = *reader;
  job.dedup = *dedup;
  job.out_dir = cmd.out;
  job.replace_output = cmd.force;
  // With --from, --resume is the --to sink's (a database source keeps no journal).
  job.resume = cmd.db.sink.resume && !cmd.out.empty() && !cmd.db.reads_database();
  job.zstd_output = cmd.zstd;
  job.annotate = cmd.annotate;
  job.duplicates_parquet = cmd.duplicates_parquet;
  job.against = cmd.against;
  job.dedup.against_only = cmd.against_only;
  job.write_index = !cmd.no_index;
  job.skip_bad_records = cmd.on_error == "skip";
  job.progress = cmd.quiet ? progress_style::none : progress_style::automatic;
  if (cmd.quiet) job.max_error_messages = 0;  // quiet: the counts stay in summary.json
  job.threads = cmd.threads;
  job.memory_limit = *limit;
  return_large_blocks_when_freed(*limit);
  job.report_clusters = cmd.report_clusters;
  job.keep_spec = cmd.keep;
  signal_watch signals;
  job.stop = signals.stop();
  dedup_database database;
  if (auto st = database.open(cmd.db, job, !cmd.out.empty(), job.stop); !st) {
    print_error("dedup", st.error().message);
    return st.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  auto summary = run_dedup_job(job, stderr);
  uint64_t kept_rows = 0;
  if (summary) {
    if (auto kept = database.finish(cmd.db); !kept) {
      summary = std::move(kept).error();
    } else {
      kept_rows = *kept;
    }
  }
  if (const int sig = signals.signal(); sig != 0 && !summary) {
    std::fprintf(stderr,
                 "simdup dedup: error: interrupted by %s; %s was left as it was and the partial "
                 "result removed\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", cmd.out.c_str());
    return 128 + sig;
  }
  if (!summary) {
    print_error("dedup", flag_message(summary.error()));
    return summary.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  if (!cmd.quiet) {
    std::fputs(human_summary(*summary).c_str(), stdout);
    if (cmd.db.writes_database()) {
      std::printf("  decisions   table %s, run %s\n", cmd.db.sink.table.c_str(),
                  cmd.db.sink.run.c_str());
    }
    if (!cmd.db.kept_table.empty()) {
      std::printf("  kept rows   %llu in table %s\n", static_cast<unsigned long long>(kept_rows),
                  cmd.db.kept_table.c_str());
    }
  }
  if (!cmd.quiet && !cmd.out.empty()) {
    const char* ext = summary->output_format == "text" ? "txt" : summary->output_format.c_str();
    // Parquet compresses its own pages: kept.parquet is never .zst.
    const char* zst = cmd.zstd && summary->output_format != "parquet" ? ".zst" : "";
    std::string annotated = cmd.annotate ? std::string(", annotated.") + ext + zst : std::string();
    if (cmd.duplicates_parquet) annotated += ", duplicates.parquet";
    // "out/" names the directory as "out" does: no "out//kept.jsonl".
    std::string dir = cmd.out;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::string more = cmd.against.empty() ? "" : ", against_hits.jsonl";
    if (summary->index_written) more += ", index/";
    std::printf("  output      %s%s{kept.%s%s%s, duplicates.jsonl, summary.json, report.html%s}\n",
                dir.c_str(), dir == "/" ? "" : "/", ext, zst, annotated.c_str(), more.c_str());
  }
  if (!cmd.quiet) warn_about_input(cmd, *summary);
  return summary->skipped + summary->skipped_inputs > 0 ? exit_partial : exit_ok;
}

void setup_dedup(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<dedup_command>();
  cmd->fp.min_features = detection_min_features;
  CLI::App* sub = app.add_subcommand(
      "dedup",
      "Find exact and near duplicates in a corpus and write DIR/kept.<format> (kept records, "
      "unchanged), duplicates.jsonl, summary.json and report.html");
  add_input_options(*sub, cmd->input);
  const char* g = "Dedup";
  sub->add_option("--out", cmd->out,
                  "Output directory, created when the run succeeds; may exist if empty; required "
                  "unless --to")
      ->group(g);
  sub->add_flag("--force", cmd->force,
                "Replace --out DIR even if it is not empty (atomically, when the run succeeds)")
      ->group(g);
  sub->add_option("--mode", cmd->mode,
                  "stream: keep the first, drop later documents within k of a kept one; batch: "
                  "all pairs, clusters, one representative each (default: stream for stdin, "
                  "batch for files)")
      ->check(CLI::IsMember({"stream", "batch"}))
      ->group(g);
  sub->add_option("--layers", cmd->layers,
                  "Comma-separated layers, applied cheapest first: url (same normalised URL), "
                  "title (same normalised title; opt-in), exact (same normalised text), near "
                  "(SimHash within k)")
      ->capture_default_str()
      ->group(g);
  sub->add_option("--keep", cmd->keep,
                  "Representative of a cluster (batch): first, longest, newest, field:NAME "
                  "(largest number in JSON field NAME)")
      ->capture_default_str()
      ->group(g);
  add_detection_options(*sub, cmd->detection, g);
  sub->add_flag("--zstd", cmd->zstd, "Write kept records zstd-compressed (kept.<format>.zst)")
      ->group(g);
  sub->add_flag("--annotate", cmd->annotate,
                "Also write annotated.<format>: every input record in input order with its "
                "decision (keep, cluster, duplicate_of, distance, layer, jaccard): JSONL gets a "
                "\"simdup\" object, CSV six simdup_* columns at the end, TSV six columns before "
                "the id, Parquet six simdup_* columns (JSONL, CSV, TSV and Parquet inputs)")
      ->group(g);
  sub->add_flag("--duplicates-parquet", cmd->duplicates_parquet,
                "Also write duplicates.parquet: the rows of duplicates.jsonl as a Parquet table "
                "(ids as strings)")
      ->group(g);
  const char* a = "Against earlier runs";
  sub->add_option("--against", cmd->against,
                  "An earlier run's output directory (or its index/, or a merged index): drop "
                  "the documents that are exact or verified near duplicates of its documents, "
                  "naming them in duplicates.jsonl (\"against\"); repeatable; batch mode; the "
                  "detection settings must be the index's")
      ->type_name("DIR")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(a);
  sub->add_flag("--against-only", cmd->against_only,
                "Decontamination: drop only the documents that match --against (an evaluation "
                "set's run), compare the input with nothing else; DIR/against_hits.jsonl says "
                "which of its documents were hit how often")
      ->group(a);
  sub->add_flag("--no-index", cmd->no_index,
                "Do not write DIR/index/ (the kept documents' fingerprints, keys, ids and "
                "shingles that a later run's --against reads)")
      ->group(a);
  sub->add_option("--report-clusters", cmd->report_clusters,
                  "Largest clusters shown in report.html")
      ->capture_default_str()
      ->group(g);
  add_fingerprint_options(*sub, cmd->fp);
  add_database_source_options(*sub, cmd->db);
  add_database_sink_options(*sub, cmd->db, true);
  const char* r = "Errors and progress";
  sub->add_option(
         "--on-error", cmd->on_error,
         "Bad records and unreadable inputs (missing file, directory, truncated .gz/.zst): "
         "fail (stop, exit 1, DIR untouched) or skip (report them, count them by reason "
         "in summary.json, go on; exit 3)")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str()
      ->group(r);
  add_threads_option(*sub, cmd->threads)->group(r);
  sub->add_option("--memory-limit", cmd->memory_limit,
                  "Most memory the run holds, bytes with optional K/M/G/T suffix (0: no limit; "
                  "default: half of physical memory). Past half of it the MinHash keys and "
                  "candidate sketches go to --tmp-dir and the pair search runs in passes; the "
                  "decisions are the same. About 70 bytes per document and the ids stay in "
                  "memory: a run that outgrows the limit stops, naming the bytes needed")
      ->group(r);
  sub->add_flag("-q,--quiet", cmd->quiet,
                "No progress, no per-record skipped messages and no stdout summary (errors "
                "only); summary.json still counts everything")
      ->group(r);
  sub->callback([cmd, &rc] { rc = run_dedup(*cmd); });
}

SIMDUP_REGISTER_COMMAND(20, setup_dedup);

}  // namespace
}  // namespace simdup::cli
