#include "dedup/job_output.hpp"

#include "dedup/run_journal.hpp"

#include <simdup/reader.hpp>

#include "dedup/job_input.hpp"

namespace simdup::detail {

namespace fs = std::filesystem;

job_output::job_output(const dedup_job_options& options, std::optional<output_dir> dir)
    : options_(&options), dir_(std::move(dir)) {}

result<job_output> job_output::create(const dedup_job_options& options, std::FILE* log) {
  if (options.out_dir.empty()) return job_output(options, std::nullopt);
  auto dir = output_dir::create(options.out_dir, options.replace_output, options.resume);
  if (!dir) return std::move(dir).error();
  for (const fs::path& stale : dir->stale_removed()) {
    if (log && options.progress != progress_style::none) {
      std::fprintf(log,
                   "simdup dedup: removed %s, the staging directory of a run that was killed\n",
                   stale.c_str());
    }
  }
  job_output out(options, std::move(dir).value());
  const fs::path& staging = out.dir_->temp_path();
  out.kept_.emplace(staging, options.zstd_output);
  if (options.annotate) out.annotated_.emplace(staging, options.zstd_output, "annotated");
  auto duplicates = file_sink::open(staging / "duplicates.jsonl", false);
  if (!duplicates) return std::move(duplicates).error();
  out.duplicates_.emplace(std::move(duplicates).value());
  return out;
}

fs::path job_output::staging_path() const {
  return dir_ ? dir_->temp_path() : fs::path();
}

status job_output::write(uint32_t ordinal, const document& doc, const dedup_decision& decision,
                         std::string_view csv_header) {
  const bool kept = decision.kept(ordinal);
  const uint32_t rep = decision.representative;
  const dedup_index* earlier =
      decision.against != 0 ? against_.at(decision.against - 1).get() : nullptr;
  const std::string_view rep_id = kept      ? std::string_view(doc.id)
                                  : earlier ? earlier->id(rep)
                                            : ids_.id(rep);
  const bool rep_is_number = kept      ? doc.id_is_number
                             : earlier ? earlier->id_is_number(rep)
                                       : ids_.is_number(rep);
  if (options_->decisions) {
    if (auto st = options_->decisions->write(ordinal, doc.id, decision, rep_id); !st) return st;
  }
  if (!dir_) return {};
  if (annotated_) {
    const record_annotation note{.keep = kept,
                                 .cluster = earlier ? ordinal : decision.representative,
                                 .duplicate_of = rep_id,
                                 .duplicate_of_is_number = rep_is_number,
                                 .distance = decision.distance,
                                 .layer = decision.layer,
                                 .jaccard = decision.jaccard};
    if (auto st = annotated_->write(doc, csv_header, &note); !st) return st;
  }
  if (kept) return kept_->write(doc, csv_header);
  line_.clear();
  append_duplicate_line(line_, doc.id, doc.id_is_number, rep_id, rep_is_number, decision,
                        earlier ? std::string_view(earlier->name()) : std::string_view());
  return duplicates_->write(line_);
}

status job_output::close_files(dedup_summary& summary, const std::vector<std::string>& inputs) {
  if (auto st = kept_->close(); !st) return st;
  if (annotated_) {
    if (auto st = annotated_->close(); !st) return st;
  }
  if (auto st = duplicates_->close(); !st) return st;
  if (options_->duplicates_parquet) {
    const fs::path staging = dir_->temp_path();
    auto st =
        write_duplicates_parquet(staging / "duplicates.jsonl", staging / "duplicates.parquet");
    if (!st) return st;
  }
  summary.output_format = kept_->first_format();
  if (summary.output_format.empty() && !inputs.empty()) {
    summary.output_format = input_format_name(options_->reader.format == input_format::auto_detect
                                                  ? format_from_extension(inputs.front())
                                                  : options_->reader.format);
  }
  if (kept_->names().empty()) {
    auto format = parse_input_format(summary.output_format);
    return kept_->write_empty(format ? *format : input_format::jsonl,
                              inputs.empty() ? std::string() : inputs.front());
  }
  return {};
}

status job_output::commit(const dedup_summary& summary) {
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"summary.json", summary_json(summary)},
        {"report.html", report_html(summary)}}) {
    auto f = file_sink::open(dir_->temp_path() / name, false);
    if (!f) return std::move(f).error();
    if (auto st = f->write(text); !st) return st;
    if (auto st = f->close(); !st) return st;
  }
  // The last point of no return: a stop request before it leaves DIR as it was.
  if (stop_requested(options_->stop)) return interrupted_error();
  // The resume journal is the run's own: the output does not carry it.
  remove_journal(dir_->journal_dir());
  dir_->keep_journal_on_failure(false);
  return dir_->commit();
}

}  // namespace simdup::detail
