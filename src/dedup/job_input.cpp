#include "dedup/job_input.hpp"

#include <simdup/reader.hpp>

#include "dedup/output_dir.hpp"
#include "dedup/run_journal.hpp"
#include "io/byte_source.hpp"
#include "util/cpu.hpp"

#include <tbb/parallel_pipeline.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace simdup::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kChunkDocs = 256;
constexpr std::size_t kChunkBytes = 2 << 20;

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

// Copies stdin to `path`. Polls, so that a stop request is seen while stdin is an idle pipe.
status spool_stdin(const fs::path& path, const std::atomic<bool>* stop) {
  auto sink = file_sink::open(path, false);
  if (!sink) return std::move(sink).error();
  std::string buffer(1 << 20, '\0');
  for (;;) {
    auto n = read_fd(STDIN_FILENO, buffer.data(), buffer.size(), "stdin", stop);
    if (!n)
      return stop_requested(stop) ? status(interrupted_error()) : status(std::move(n).error());
    if (*n == 0) break;
    if (auto st = sink->write(std::string_view(buffer).substr(0, *n)); !st) return st;
  }
  return sink->close();
}

// Decodes the chunk's deferred records. A malformed one leaves docs[0, count) (the others keep
// their order, and the CSV header runs their records) for a bad entry in its place.
void decode_chunk(chunk& c, const field_names& fields) {
  std::vector<std::size_t> dropped;
  c.count = decode_records(
      std::span(c.docs.data(), c.count), fields, [&](std::size_t at, error_info& err) {
        // After the reader's entries that came before record `at`.
        const auto place = std::upper_bound(
            c.bad.begin(), c.bad.end(), at,
            [](std::size_t record, const bad_entry& e) { return record < e.before; });
        std::string reason(errc_name(err.code));
        c.bad.insert(place, {std::move(err), std::move(reason), false, at});
        dropped.push_back(at);
        return true;
      });
  for (chunk::header_run& run : c.csv_headers) {
    run.first -= static_cast<std::size_t>(
        std::lower_bound(dropped.begin(), dropped.end(), run.first) - dropped.begin());
  }
}

// The digest of a chunk as the reader gave it: its records' bytes and places.
uint64_t chunk_digest(const chunk& c) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (std::size_t i = 0; i < c.count; ++i) {
    const document& d = c.docs[i];
    const uint64_t place[2] = {d.line, d.offset};
    XXH3_64bits_update(state, place, sizeof place);
    XXH3_64bits_update(state, d.raw.data(), d.raw.size());
  }
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return digest;
}

}  // namespace

error_info interrupted_error() {
  return make_error(errc::io_error, "interrupted: stopped before the end");
}

result<job_input> job_input::open(const dedup_job_options& options, const fs::path& spool_dir) {
  job_input in(options);
  if (!options.open_source) {
    std::vector<std::string> given =
        options.inputs.empty() ? std::vector<std::string>{"-"} : options.inputs;
    auto expanded = expand_inputs(given, options.skip_bad_records);
    if (!expanded) {
      return make_error(expanded.error().code,
                        expanded.error().message + " (--on-error skip skips missing inputs)");
    }
    in.paths_ = std::move(expanded).value();
  }
  in.reader_options_ = options.reader;
  in.reader_options_.skip_failed_inputs = options.skip_bad_records;
  in.reader_options_.cancel = options.stop;
  in.has_stdin_ = std::find(in.paths_.begin(), in.paths_.end(), "-") != in.paths_.end();
  if (in.has_stdin_ && !spool_dir.empty()) {
    in.spool_ = (spool_dir / "stdin.spool").string();
    if (auto st = spool_stdin(in.spool_, options.stop); !st) return std::move(st).error();
    std::replace(in.paths_.begin(), in.paths_.end(), std::string("-"), in.spool_);
  }
  return in;
}

result<std::unique_ptr<record_source>> job_input::open_records(bool deferred) const {
  if (options_->open_source) return options_->open_source();
  reader_options opts = reader_options_;
  opts.defer_decoding = deferred;
  auto opened = reader::open(paths_, opts);
  if (!opened) return std::move(opened).error();
  return make_file_source(std::move(opened).value());
}

void job_input::restore_stdin_name(document& doc) const {
  if (spool_.empty() || doc.source != spool_) return;
  if (doc.id_generated && doc.id.starts_with(spool_)) doc.id.replace(0, spool_.size(), "stdin");
  doc.source = "stdin";
}

uint64_t job_input::total_size() const {
  uint64_t total = 0;
  for (const auto& in : paths_) {
    std::error_code ec;
    if (in == "-" || !fs::is_regular_file(in, ec)) return 0;
    total += fs::file_size(in, ec);
  }
  return total;
}

void job_input::remove_spool() const {
  if (!spool_.empty()) fs::remove(spool_);
}

uint64_t read_working_bytes(unsigned threads) {
  const uint64_t workers = threads ? threads : detail::available_cpus();
  // Per chunk: the raw records, their decoded fields (text, id, ...), the normalised text and
  // the shingle hashes (4 bytes per shingle, about one per character): 6 times its bytes.
  return (workers * 2 + 2) * kChunkBytes * 6 + (uint64_t{16} << 20);
}

status read_and_sign(const job_input& input, const document_signer& signer,
                     const dedup_job_options& options, const std::function<status(chunk&)>& consume,
                     const resume_point* resume) {
  // The reading thread only frames JSONL lines; the signing workers parse them (decode_chunk).
  auto opened = input.open_records(true);
  if (!opened) return std::move(opened).error();
  record_source& in = **opened;
  chunk_pool pool;
  status outcome;
  bool input_done = false;
  std::atomic<bool> failed{false};  // a consumed chunk failed: read no further
  const unsigned threads = options.threads ? options.threads : detail::available_cpus();
  const uint64_t replayed = resume ? resume->chunks.size() : 0;
  uint64_t next_number = 0;

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
    c->number = next_number++;
    std::size_t bytes = 0;
    error_info err;
    while (c->count < kChunkDocs && bytes < kChunkBytes) {
      if (stop_requested(options.stop)) {
        c->fatal = interrupted_error();
        input_done = true;
        break;
      }
      if (failed.load(std::memory_order_relaxed)) {
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
        c->bad.push_back(
            {err, std::string(in.last_skip_reason()), in.last_skip_was_input(), c->count});
        if (!options.skip_bad_records) break;
      } else {
        // end, or failed: an unreadable or truncated input with --on-error fail, or an
        // interrupted read (with skip, failed inputs come as bad records).
        if (rs == read_status::failed) {
          if (!stop_requested(options.stop)) {
            err.message += " (--on-error skip skips it and goes on)";
          }
          c->fatal = std::move(err);
        }
        input_done = true;
        break;
      }
    }
    if (!options.skip_bad_records && !c->bad.empty()) input_done = true;
    c->bytes = in.stats().bytes;
    c->input_bytes = in.stats().compressed_bytes;
    c->framed = static_cast<uint32_t>(c->count + c->bad.size());
    return c;
  };
  const auto sign_chunk = [&](chunk* c) {
    if (failed.load(std::memory_order_relaxed)) return c;  // recycled unread by decide_chunk
    c->digest = chunk_digest(*c);
    if (c->number < replayed) return c;  // the journal has its signatures
    decode_chunk(*c, input.fields());
    for (std::size_t i = 0; i < c->count; ++i)
      signer.sign(c->docs[i], c->sigs[i], c->csv_header(i));
    return c;
  };
  const auto decide_chunk = [&](chunk* c) {
    // After the first error the remaining chunks are only recycled.
    if (outcome && c->number < replayed && !c->fatal) {
      const resume_point::chunk_check& was = resume->chunks[c->number];
      if (was.framed != c->framed || was.digest != c->digest) {
        outcome = make_error(errc::invalid_input,
                             "--resume: the input changed since the interrupted run (its chunk " +
                                 std::to_string(c->number + 1) +
                                 " of records differs); run without --resume to start over");
      }
    } else if (outcome) {
      // Without skip, a bad record the workers found before the reader failed stops it first.
      // (consume fails at the first bad entry without skip.)
      const bool bad_first = !options.skip_bad_records && !c->bad.empty();
      outcome = c->fatal && !bad_first ? status(*c->fatal) : consume(*c);
    }
    if (!outcome) failed.store(true, std::memory_order_relaxed);
    pool.put(c);
  };
  tbb::parallel_pipeline(
      threads * 2 + 2,
      tbb::make_filter<void, chunk*>(tbb::filter_mode::serial_in_order, read_chunk) &
          tbb::make_filter<chunk*, chunk*>(tbb::filter_mode::parallel, sign_chunk) &
          tbb::make_filter<chunk*, void>(tbb::filter_mode::serial_in_order, decide_chunk));
  if (outcome && next_number < replayed) {
    return make_error(errc::invalid_input,
                      "--resume: the input changed since the interrupted run (it now ends before "
                      "the records the run had read); run without --resume to start over");
  }
  return outcome;
}

}  // namespace simdup::detail
