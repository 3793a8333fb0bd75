// `simdup idf build`: document frequencies of jieba words over the user's own corpus, written
// as an IDF file in jieba's `word idf` format, for --idf (docs/chinese.md).
#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace simdup::cli {
namespace {

struct idf_command {
  input_options input;
  fingerprint_cli_options fp;
  run_options run;
  std::string output = "-";
  std::size_t max_terms = 4'000'000;
  uint64_t min_df = 1;
};

/// Document frequencies with a memory budget: past `max_terms` distinct words, the rarest are
/// dropped (a word seen again later starts from zero), so memory stays bounded in one pass.
class df_table {
 public:
  explicit df_table(std::size_t max_terms) : max_terms_(std::max<std::size_t>(max_terms, 2)) {}

  void merge(const std::unordered_map<std::string, uint64_t>& batch, uint64_t docs) {
    std::lock_guard lock(mu_);
    docs_ += docs;
    for (const auto& [word, n] : batch) df_[word] += n;
    if (df_.size() > max_terms_) prune();
  }

  uint64_t docs() const { return docs_; }
  uint64_t pruned_terms() const { return pruned_terms_; }
  uint64_t max_pruned_df() const { return max_pruned_df_; }
  const std::unordered_map<std::string, uint64_t>& table() const { return df_; }

 private:
  // Keeps about half the budget: every word with df above the cut-off df survives.
  void prune() {
    std::vector<uint64_t> counts;
    counts.reserve(df_.size());
    for (const auto& e : df_) counts.push_back(e.second);
    const std::size_t drop = df_.size() - max_terms_ / 2;
    std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(drop - 1),
                     counts.end());
    const uint64_t cutoff = counts[drop - 1];
    max_pruned_df_ = std::max(max_pruned_df_, cutoff);
    pruned_terms_ += std::erase_if(df_, [&](const auto& e) { return e.second <= cutoff; });
  }

  std::mutex mu_;
  std::size_t max_terms_;
  std::unordered_map<std::string, uint64_t> df_;
  uint64_t docs_ = 0;
  uint64_t pruned_terms_ = 0;
  uint64_t max_pruned_df_ = 0;
};

/// `word idf` lines, idf = ln(docs / df), most frequent words first (ties by word).
status write_idf(const std::string& path, const df_table& t, uint64_t min_df) {
  std::vector<std::pair<std::string_view, uint64_t>> rows;
  for (const auto& [word, df] : t.table())
    if (df >= min_df) rows.emplace_back(word, df);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string out;
  char num[64];
  for (const auto& [word, df] : rows) {
    const double idf = std::log(static_cast<double>(t.docs()) / static_cast<double>(df));
    const auto r = std::to_chars(num, num + sizeof num, idf);
    out.append(word).push_back(' ');
    out.append(num, r.ptr).push_back('\n');
  }
  if (path == "-") {
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
      return make_error(errc::io_error, "cannot write the IDF table to stdout");
    return {};
  }
  // Written next to PATH and renamed over it: a failed or killed run never leaves a partial
  // table under PATH.
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return make_error(errc::io_error, "cannot create " + tmp + ": " + std::strerror(errno));
  const bool written = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    const std::string why = std::strerror(written ? errno : write_errno);
    std::remove(tmp.c_str());
    return make_error(errc::io_error, "cannot write " + tmp + ": " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return make_error(errc::io_error, "cannot rename " + tmp + " to " + path + ": " + why);
  }
  return {};
}

int run_idf_build(const idf_command& cmd) {
  auto resolved = cmd.fp.resolve();
  if (!resolved) {
    print_error("idf build", resolved.error().message);
    return exit_usage;
  }
  // The words keyword extraction will look up: the same normalisation and filters (compat
  // jieba-tfidf: raw text, jieba's stop words), every distinct word of a document counted once.
  auto options = resolve_jieba_options(*resolved);
  if (!options) {
    print_error("idf build", options.error().message);
    return exit_failure;
  }
  options->compat = compat_mode::none;
  options->features.kind = feature_kind::jieba;
  options->features.min_token_length = std::max<std::size_t>(options->features.min_token_length, 2);
  options->weighting.scheme = weighting_scheme::count;
  options->weighting.idf_path.clear();
  options->weighting.top_k = 0;
  auto fps = fingerprinter_set::create(*options);
  if (!fps) {
    print_error("idf build", fps.error().message);
    return exit_failure;
  }
  const fingerprinter_set& set = **fps;
  df_table table(cmd.max_terms);
  run_options run = cmd.run;
  run.output = "-";           // the job itself writes nothing; the table is written at the end
  run.warn_if_empty = false;  // an input without documents is an error here (below)
  const int rc = run_document_job("idf build", cmd.input, run, [&](document_batch& b) {
    std::unordered_map<std::string, uint64_t> batch;
    for (std::size_t i = 0; i < b.size; ++i) {
      const document& doc = b.docs[i];
      for (const weighted_feature& f : set.for_document(doc).features(doc.text)) ++batch[f.text];
    }
    table.merge(batch, b.size);
  });
  if (rc != exit_ok && rc != exit_partial) return rc;
  if (table.docs() == 0) {
    print_error("idf build", "no documents in the input");
    return exit_failure;
  }
  if (auto w = write_idf(cmd.output, table, cmd.min_df); !w) {
    print_error("idf build", w.error().message);
    return exit_failure;
  }
  if (!cmd.run.quiet && table.pruned_terms() > 0) {
    std::fprintf(stderr,
                 "simdup idf build: memory budget reached: dropped %llu rare words (df <= %llu "
                 "when dropped); raise --max-terms for exact counts\n",
                 static_cast<unsigned long long>(table.pruned_terms()),
                 static_cast<unsigned long long>(table.max_pruned_df()));
  }
  return rc;
}

void setup_idf(CLI::App& app, int& rc) {
  CLI::App* idf = app.add_subcommand("idf", "IDF tables for TF-IDF keyword weighting");
  idf->require_subcommand(1);
  auto cmd = std::make_shared<idf_command>();
  CLI::App* build = idf->add_subcommand(
      "build",
      "Count in how many documents each jieba word occurs and write `word idf` lines (idf = "
      "ln(documents / df)), jieba's idf.txt format, usable with --idf. Use the normalisation "
      "and --compat flags you will fingerprint with");
  add_input_options(*build, cmd->input);
  add_fingerprint_options(*build, cmd->fp);
  build->add_option("-o,--output", cmd->output, "IDF file to write (\"-\": stdout)")
      ->capture_default_str();
  build
      ->add_option("--max-terms", cmd->max_terms,
                   "Memory budget in distinct words; past it the rarest words are dropped")
      ->check(CLI::Range(std::size_t{1000}, std::size_t{1} << 32))
      ->capture_default_str();
  build->add_option("--min-df", cmd->min_df, "Leave out words found in fewer documents")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  build->add_option("--on-error", cmd->run.on_error, "Bad records: fail or skip")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str();
  add_threads_option(*build, cmd->run.threads);
  build->add_flag("-q,--quiet", cmd->run.quiet, "No progress or summary on stderr (errors only)");
  build->callback([cmd, &rc] { rc = run_idf_build(*cmd); });
}

SIMDUP_REGISTER_COMMAND(60, setup_idf);

}  // namespace
}  // namespace simdup::cli
