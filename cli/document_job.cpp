#include "document_job.hpp"

#include "command.hpp"

#include <simdup/output_sink.hpp>
#include <simdup/pipeline.hpp>
#include <simdup/reader.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>

namespace simdup::cli {
namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::size_t kBatchDocs = 256;
constexpr std::size_t kBatchBytes = std::size_t{4} << 20;
constexpr uint64_t kMaxWarnings = 20;  // individual skipped-record messages printed

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Reader-side state. The produce step alone touches `in`, `done` and `bytes`; the consume
/// step, in input order, the counts and the failure.
struct read_state {
  record_source* in = nullptr;
  const field_names* fields = nullptr;  ///< of records read with defer_decoding
  bool skip_bad = false;
  bool done = false;
  bool failed = false;
  std::string failure;
  uint64_t skipped = 0;         ///< bad records
  uint64_t skipped_inputs = 0;  ///< inputs that could not be read (not records)
  std::map<std::string, uint64_t> reasons;
  std::map<std::string, uint64_t> input_reasons;
  std::vector<std::string> warnings;
  /// Decompressed bytes read so far, published for the progress line (another thread).
  std::atomic<uint64_t> bytes{0};
};

std::string bad_record_failure(const std::string& message) {
  return "stopped at " + message + "; --on-error skip skips such records";
}

// Frames records (the reader parses no JSON here: see decode_batch).
bool produce(read_state& st, document_batch& batch) {
  batch.size = 0;
  batch.out.clear();
  batch.invalid_utf8 = 0;
  batch.too_short = 0;
  batch.skipped.clear();
  batch.failure.clear();
  if (st.done) return false;
  std::size_t bytes = 0;
  error_info err;
  while (batch.size < kBatchDocs && bytes < kBatchBytes) {
    if (batch.docs.size() <= batch.size) batch.docs.resize(batch.size + 1);
    document& doc = batch.docs[batch.size];
    const read_status rs = st.in->next(doc, err);
    if (rs == read_status::record) {
      bytes += doc.raw.size();
      ++batch.size;
      continue;
    }
    if (rs == read_status::bad_record && st.skip_bad) {
      batch.skipped.push_back({batch.size, err.message, std::string(st.in->last_skip_reason()),
                               st.in->last_skip_was_input()});
      continue;
    }
    st.done = true;
    if (rs == read_status::bad_record) {
      batch.failure = bad_record_failure(err.message);
    } else if (rs == read_status::failed) {
      batch.failure = err.message;
    }
    break;
  }
  st.bytes.store(st.in->stats().bytes, std::memory_order_relaxed);
  return batch.size > 0 || !batch.skipped.empty() || !batch.failure.empty();
}

// Decodes the batch's deferred records in parallel; a bad one is skipped (its frame leaves
// docs[0, size), the others keep their order) or, without --on-error skip, ends the batch
// there with the failure.
void decode_batch(const read_state& st, document_batch& batch) {
  batch.size = decode_records(
      std::span(batch.docs.data(), batch.size), *st.fields, [&](std::size_t at, error_info& err) {
        if (!st.skip_bad) {
          batch.failure = bad_record_failure(err.message);  // earlier than the reader's own
          return false;
        }
        // After the reader's skips that came before frame `at`, so all stay in input order.
        const auto place = std::upper_bound(
            batch.skipped.begin(), batch.skipped.end(), at,
            [](std::size_t frame, const skipped_record& s) { return frame < s.before; });
        batch.skipped.insert(place, {at, err.message, std::string(errc_name(err.code)), false});
        return true;
      });
}

// In input order: the batch's skips counted, and its failure taken.
void account(read_state& st, const document_batch& batch) {
  for (const skipped_record& s : batch.skipped) {
    ++(s.input ? st.skipped_inputs : st.skipped);
    ++(s.input ? st.input_reasons : st.reasons)[s.reason];
    if (st.warnings.size() < kMaxWarnings) st.warnings.push_back(s.message);
  }
  if (!batch.failure.empty()) {
    st.failed = true;
    st.failure = batch.failure;
  }
}

std::string human_bytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

}  // namespace

std::string describe_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty() || (inputs.size() == 1 && inputs[0] == "-")) return "stdin";
  return inputs.size() == 1 ? inputs[0] : "the " + std::to_string(inputs.size()) + " inputs";
}

void print_error(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "simdup %s: error: %s\n", command.c_str(), message.c_str());
}

int run_document_job(const std::string& command, const input_options& input, const run_options& run,
                     const batch_processor& process, const document_job_io* io) {
  std::unique_ptr<record_source> files;
  record_source* rd = io ? io->source : nullptr;
  if (!rd) {
    auto ropts = input.resolve();
    if (!ropts) {
      print_error(command, ropts.error().message);
      return exit_usage;
    }
    // With skip, a missing, truncated or unreadable input is skipped like a bad record.
    ropts->skip_failed_inputs = run.on_error == "skip";
    ropts->defer_decoding = true;  // JSON is parsed by the workers (decode_batch)
    auto opened = reader::open(input.inputs, *ropts);
    if (!opened) {
      print_error(command, opened.error().message);
      return exit_failure;
    }
    files = make_file_source(std::move(opened).value());
    rd = files.get();
  }
  const bool to_file = !io || !io->write;
  auto sink = output_sink::open(to_file ? run.output : "-");
  if (!sink) {
    print_error(command, sink.error().message);
    return exit_failure;
  }

  read_state st;
  st.in = rd;
  st.fields = &input.fields;
  st.skip_bad = run.on_error == "skip";
  const bool progress = !run.quiet && ::isatty(STDERR_FILENO) == 1;
  const auto start = clock_type::now();
  auto last_progress = start;
  uint64_t written = 0, too_short = 0, invalid_utf8 = 0;
  std::string write_error;

  run_ordered_pipeline<document_batch>(
      run.threads, [&](document_batch& b) { return produce(st, b); },
      [&](document_batch& b) {
        decode_batch(st, b);
        process(b);
        for (std::size_t i = 0; i < b.size; ++i) b.invalid_utf8 += b.docs[i].invalid_utf8;
      },
      [&](document_batch& b) {
        account(st, b);
        if (auto w = to_file ? sink->write(b.out) : io->write(b); !w) {
          write_error = w.error().message;
          return false;
        }
        written += b.size;
        too_short += b.too_short;
        invalid_utf8 += b.invalid_utf8;
        if (progress && seconds_since(last_progress) > 0.5) {
          last_progress = clock_type::now();
          const double secs = seconds_since(start);
          const double mb = static_cast<double>(st.bytes.load(std::memory_order_relaxed));
          std::fprintf(stderr, "\r\033[Ksimdup %s: %llu records, %s, %.1f MB/s", command.c_str(),
                       static_cast<unsigned long long>(written), human_bytes(mb).c_str(),
                       mb / 1e6 / (secs > 0 ? secs : 1));
        }
        return !sink->broken_pipe() && !st.failed;
      });
  if (progress) std::fprintf(stderr, "\r\033[K");

  if (write_error.empty() && !st.failed) {
    if (auto c = to_file ? sink->commit() : io->commit(); !c) write_error = c.error().message;
  }
  if (sink->broken_pipe()) return exit_ok;  // the reader of our output has all it wanted

  if (!run.quiet) {
    for (const std::string& w : st.warnings) {
      std::fprintf(stderr, "simdup %s: skipped %s\n", command.c_str(), w.c_str());
    }
    const uint64_t skips = st.skipped + st.skipped_inputs;
    if (skips > st.warnings.size()) {
      std::fprintf(stderr, "simdup %s: ... and %llu more skipped\n", command.c_str(),
                   static_cast<unsigned long long>(skips - st.warnings.size()));
    }
  }
  // "3 records skipped (invalid_input: 3)"
  const auto skipped_with_reasons = [](uint64_t n, const char* what,
                                       const std::map<std::string, uint64_t>& by_reason) {
    std::string out = std::to_string(n) + " " + what + " skipped";
    std::string reasons;
    for (const auto& [name, count] : by_reason) {
      reasons += (reasons.empty() ? " (" : ", ") + name + ": " + std::to_string(count);
    }
    return out + (reasons.empty() ? "" : reasons + ")");
  };
  const bool skipped_any = st.skipped + st.skipped_inputs > 0;
  if (!run.quiet && (run.stats || skipped_any || invalid_utf8 > 0)) {
    const double secs = seconds_since(start);
    const double bytes = static_cast<double>(rd->stats().bytes);
    // Counts are of records; inputs that could not be read are counted apart.
    const std::string inputs =
        st.skipped_inputs > 0
            ? ", " + skipped_with_reasons(st.skipped_inputs, "inputs", st.input_reasons)
            : "";
    std::fprintf(stderr,
                 "simdup %s: %llu records written, %s%s, %llu invalid UTF-8 sequences "
                 "replaced, %llu too_short; %s in %.2f s (%.1f MB/s)\n",
                 command.c_str(), static_cast<unsigned long long>(written),
                 skipped_with_reasons(st.skipped, "records", st.reasons).c_str(), inputs.c_str(),
                 static_cast<unsigned long long>(invalid_utf8),
                 static_cast<unsigned long long>(too_short), human_bytes(bytes).c_str(), secs,
                 bytes / 1e6 / (secs > 0 ? secs : 1));
  }
  if (!run.quiet && run.warn_if_empty && !st.failed && write_error.empty() && written == 0 &&
      !skipped_any) {
    // Not an error (an empty shard has an empty result), but rarely what was meant.
    const std::string where =
        io && io->source ? "the database source" : describe_inputs(input.inputs);
    std::fprintf(stderr, "simdup %s: warning: no records in %s; the output is empty\n",
                 command.c_str(), where.c_str());
  }
  if (st.failed) {
    print_error(command, st.failure);
    if (to_file && run.output != "-") {
      std::fprintf(stderr, "simdup %s: %s was not written\n", command.c_str(), run.output.c_str());
    }
    return exit_failure;
  }
  if (!write_error.empty()) {
    print_error(command, write_error);
    return exit_failure;
  }
  return skipped_any ? exit_partial : exit_ok;
}

}  // namespace simdup::cli
