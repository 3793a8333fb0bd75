// `simdup dedup`: decide for every document whether it is a duplicate and say why; writes
// --out DIR (docs/dedup.md). The job itself is the library's run_dedup_job.
#include "command.hpp"
#include "database_options.hpp"
#include "document_job.hpp"
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

// Defaults chosen from the evaluation (docs/tuning.md, "Choosing the dedup defaults"): with
// verification, k = 8 and star clusters reach F1 >= 0.9 in English and Chinese; plain k = 3
// does not (chained boilerplate families and unverified pairs).
constexpr int kDefaultK = 8;
constexpr const char* kDefaultVerify = "jaccard:0.8";

/// Below this many distinct features a document is "short": exact layers only. A handful of
/// shingles votes a fingerprint that unrelated short texts share by accident.
constexpr std::size_t kDedupMinFeatures = 10;

struct dedup_command {
  input_options input;
  database_options db;
  fingerprint_cli_options fp;
  std::string out;
  bool force = false;
  std::string mode;  // empty: stream for stdin, batch for files
  int k = kDefaultK;
  std::string layers = "url,exact,near";
  std::string keep = "first";
  std::string clusters = "anchored";
  double anchor_floor = 0.8;
  std::string minhash = "10x6";
  std::string verify = kDefaultVerify;
  std::size_t verify_max_hashes = 0;
  std::size_t verify_shingle_width = 5;
  std::string tmp_dir;
  bool zstd = false;
  std::string on_error = "fail";
  unsigned threads = 0;
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

result<dedup_options> resolve_dedup(const dedup_command& cmd) {
  dedup_options o;
  const bool only_stdin =
      !cmd.db.reads_database() &&
      (cmd.input.inputs.empty() || (cmd.input.inputs.size() == 1 && cmd.input.inputs[0] == "-"));
  const std::string mode = cmd.mode.empty() ? (only_stdin ? "stream" : "batch") : cmd.mode;
  o.mode = mode == "stream" ? dedup_mode::stream : dedup_mode::batch;
  o.k = cmd.k;
  o.url_layer = o.title_layer = o.content_layer = o.near_layer = false;
  std::stringstream list(cmd.layers);
  std::string layer;
  while (std::getline(list, layer, ',')) {
    if (layer == "url") {
      o.url_layer = true;
    } else if (layer == "title") {
      o.title_layer = true;
    } else if (layer == "exact") {
      o.content_layer = true;
    } else if (layer == "near") {
      o.near_layer = true;
    } else {
      return make_error(errc::invalid_argument,
                        "--layers: unknown layer '" + layer + "' (url, title, exact, near)");
    }
  }
  auto keep = parse_keep_policy(cmd.keep);
  if (!keep) return std::move(keep).error();
  o.keep = std::move(keep).value();
  o.linking = cmd.clusters == "star"       ? cluster_linking::star
              : cmd.clusters == "anchored" ? cluster_linking::anchored
                                           : cluster_linking::components;
  o.anchor_floor = cmd.anchor_floor;
  auto minhash = parse_minhash_spec(cmd.minhash);
  if (!minhash) return std::move(minhash).error();
  o.minhash = *minhash;
  if (cmd.verify != "off") {
    auto v = parse_verify_spec(cmd.verify);
    if (!v) return std::move(v).error();
    v->max_hashes = cmd.verify_max_hashes;
    v->shingle_width = cmd.verify_shingle_width;
    v->tmp_dir = cmd.tmp_dir;
    o.verify = *v;
  }
  // MinHash is a batch generator (stream mode probes SimHash only).
  if (o.mode == dedup_mode::stream) o.minhash = minhash_options{};
  if (!o.verify) {
    // MinHash pairs and anchoring need the shingles that only verification keeps.
    o.minhash = minhash_options{};
    if (o.linking == cluster_linking::anchored) o.linking = cluster_linking::star;
  }
  return o;
}

int run_dedup(const dedup_command& cmd) {
  dedup_job_options job;
  auto reader = cmd.input.resolve();
  auto fp = cmd.fp.resolve();
  auto dedup = resolve_dedup(cmd);
  status db = cmd.db.validate(!cmd.input.inputs.empty());
  if (db && cmd.out.empty() && !cmd.db.writes_database()) {
    db = make_error(errc::invalid_argument, "--out is required (or --to)");
  }
  if (db && cmd.db.reads_database() && cmd.keep.starts_with("field:")) {
    // The rows reach the job as id, text, url, title and time only.
    db = make_error(errc::invalid_argument,
                    "--keep field:NAME reads JSONL or CSV fields; with --from use first, "
                    "longest, or newest (with --time-column)");
  }
  for (const error_info* e : {reader ? nullptr : &reader.error(), fp ? nullptr : &fp.error(),
                              dedup ? nullptr : &dedup.error(), db ? nullptr : &db.error()}) {
    if (e) {
      print_error("dedup", e->message);
      return exit_usage;
    }
  }
  job.inputs = cmd.input.inputs;
  job.reader = *reader;
  job.fingerprint = *fp;
  job.dedup = *dedup;
  job.out_dir = cmd.out;
  job.replace_output = cmd.force;
  job.zstd_output = cmd.zstd;
  job.skip_bad_records = cmd.on_error == "skip";
  job.progress = cmd.quiet ? progress_style::none : progress_style::automatic;
  if (cmd.quiet) job.max_error_messages = 0;  // quiet: the counts stay in summary.json
  job.threads = cmd.threads;
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
    print_error("dedup", summary.error().message);
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
    std::printf("  output      %s/{kept.%s%s, duplicates.jsonl, summary.json, report.html}\n",
                cmd.out.c_str(),
                summary->output_format == "text" ? "txt" : summary->output_format.c_str(),
                cmd.zstd ? ".zst" : "");
  }
  return summary->skipped + summary->skipped_inputs > 0 ? exit_partial : exit_ok;
}

void setup(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<dedup_command>();
  cmd->fp.min_features = kDedupMinFeatures;
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
  sub->add_option("-k,--k", cmd->k,
                  "Near duplicates: documents whose fingerprints differ in at most k of 64 bits "
                  "(inclusive, 0-32)")
      ->check(distance_k(32))
      ->capture_default_str()
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
  sub->add_option("--clusters", cmd->clusters,
                  "Batch clusters: star links each duplicate directly to its representative "
                  "(chains A~B~C do not join A and C); components joins every chain "
                  "(connected components); anchored: components of verified links, members "
                  "whose Jaccard with the representative is under --anchor-floor split off "
                  "(star when --verify off)")
      ->check(CLI::IsMember({"components", "star", "anchored"}))
      ->capture_default_str()
      ->group(g);
  sub->add_option("--minhash", cmd->minhash,
                  "BANDSxROWS: MinHash-LSH bands over the verification shingles as a second "
                  "candidate generator beside SimHash (batch, with --verify; ignored with "
                  "--verify off); off: SimHash only")
      ->capture_default_str()
      ->group(g);
  sub->add_option("--anchor-floor", cmd->anchor_floor,
                  "--clusters anchored: least Jaccard of a member with its representative")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->group(g);
  sub->add_option("--verify", cmd->verify,
                  "jaccard:T: confirm each near pair by the Jaccard similarity of character "
                  "shingle sets, drop pairs below T; off: every pair within k is a duplicate")
      ->capture_default_str()
      ->group(g);
  sub->add_option("--verify-shingle-width", cmd->verify_shingle_width,
                  "Code points per verification shingle")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->capture_default_str()
      ->group(g);
  sub->add_option("--verify-max-hashes", cmd->verify_max_hashes,
                  "Keep only the N smallest shingle hashes per document (bottom-k sketch, 4*N "
                  "bytes); 0 keeps all (exact Jaccard)")
      ->capture_default_str()
      ->group(g);
  sub->add_option("--tmp-dir", cmd->tmp_dir,
                  "Directory for the temporary file of --verify's shingle arrays (about 3 "
                  "bytes per distinct shingle, deleted at the end; default: the output's "
                  "staging directory next to DIR)")
      ->group(g);
  sub->add_flag("--zstd", cmd->zstd, "Write kept records zstd-compressed (kept.<format>.zst)")
      ->group(g);
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
  sub->add_option("--threads", cmd->threads, "Worker threads (0: all cores)")
      ->capture_default_str()
      ->group(r);
  sub->add_flag("-q,--quiet", cmd->quiet,
                "No progress, no per-record skipped messages and no stdout summary (errors "
                "only); summary.json still counts everything")
      ->group(r);
  sub->callback([cmd, &rc] { rc = run_dedup(*cmd); });
}

SIMDUP_REGISTER_COMMAND(20, setup);

}  // namespace
}  // namespace simdup::cli
