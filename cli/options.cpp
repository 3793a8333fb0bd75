#include "options.hpp"

#include <charconv>
#include <string_view>
#include <utility>

namespace simdup::cli {

void add_field_options(CLI::App& cmd, field_names& fields, const char* g) {
  cmd.add_option("--id-field", fields.id, "JSONL key / CSV column of the document id")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--text-field", fields.text, "JSONL key / CSV column of the text")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--url-field", fields.url, "JSONL key / CSV column of the URL")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--title-field", fields.title, "JSONL key / CSV column of the title")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--time-field", fields.time,
                 "JSONL key / CSV column of the time (unix seconds or ISO-8601)")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--features-field", fields.features,
                 "JSONL key of supplied features: [\"tok\", ...] or [[\"tok\", weight], ...]")
      ->capture_default_str()
      ->group(g);
}

void add_input_options(CLI::App& cmd, input_options& opts) {
  cmd.add_option("INPUT", opts.inputs,
                 "Input files or globs (\"-\" or none: stdin). .gz and .zst are decompressed")
      ->type_name("INPUT...");
  const char* g = "Input";
  cmd.add_option("--input-format", opts.format,
                 "Input format; auto uses the extension (.jsonl .json .ndjson .tsv .csv .txt "
                 ".warc .wet, under .gz/.zst; .parquet), else sniffs the content")
      ->check(CLI::IsMember({"auto", "jsonl", "ndjson", "json", "tsv", "csv", "text", "txt", "warc",
                             "wet", "parquet"}))
      ->capture_default_str()
      ->group(g);
  add_field_options(cmd, opts.fields, g);
  cmd.add_option("--max-record-mb", opts.max_record_mb,
                 "Records larger than this (MiB) are bad records")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str()
      ->group(g);
}

result<reader_options> input_options::resolve() const {
  auto fmt = parse_input_format(format);
  if (!fmt) return std::move(fmt).error();
  reader_options r;
  r.format = *fmt;
  r.fields = fields;
  r.max_record_bytes = max_record_mb << 20;
  return r;
}

void add_fingerprint_options(CLI::App& cmd, fingerprint_cli_options& opts) {
  const char* n = "Normalisation";
  cmd.add_flag("--html", opts.html,
               "Treat text as HTML: drop tags, comments, script/style; decode entities (WARC "
               "responses are always HTML)")
      ->group(n);
  cmd.add_flag("--no-nfkc", opts.no_nfkc, "Skip Unicode NFKC (full-width to half-width)")->group(n);
  cmd.add_flag("--no-casefold", opts.no_casefold, "Skip Unicode case folding")->group(n);
  cmd.add_flag("--no-t2s", opts.no_t2s, "Skip traditional-to-simplified Chinese (OpenCC)")
      ->group(n);
  cmd.add_flag("--keep-punctuation", opts.keep_punctuation,
               "Keep punctuation and symbols (removed by default)")
      ->group(n);
  cmd.add_flag("--strip-digits", opts.strip_digits, "Remove decimal digits")->group(n);

  const char* f = "Features";
  cmd.add_option("--features", opts.features,
                 "Feature kind: shingles (character n-grams), words, word-ngrams, jieba, "
                 "keywords (jieba TF-IDF)")
      ->check(CLI::IsMember({"shingles", "words", "word-ngrams", "jieba", "keywords"}))
      ->capture_default_str()
      ->group(f);
  cmd.add_option("--shingle-width", opts.shingle_width, "Code points per shingle")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
      ->capture_default_str()
      ->group(f);
  cmd.add_option("--ngram", opts.ngram, "Words per word n-gram (word-ngrams)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->capture_default_str()
      ->group(f);
  cmd.add_option("--min-token-length", opts.min_token_length,
                 "Drop tokens shorter than this many code points (words, jieba, keywords)")
      ->capture_default_str()
      ->group(f);
  cmd.add_option("--jieba-dict", opts.jieba_dict,
                 "jieba dictionary (default: the built-in location)")
      ->group(f);
  cmd.add_option("--user-dict", opts.user_dicts,
                 "jieba user dictionary (`word [freq] [tag]` per line); repeat for several, "
                 "loaded in order (jieba, keywords, compat jieba-tfidf)")
      ->allow_extra_args(false)
      ->group(f);
  cmd.add_option("--min-features", opts.min_features,
                 "Documents with fewer distinct features get status too_short")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str()
      ->group(f);

  const char* w = "Weighting and hashing";
  cmd.add_option("--weighting", opts.weighting,
                 "Feature weights: count (occurrences), binary, tfidf (needs --idf)")
      ->check(CLI::IsMember({"count", "binary", "tfidf"}))
      ->capture_default_str()
      ->group(w);
  cmd.add_option("--idf", opts.idf_path, "IDF file, `word idf` per line (jieba's idf.txt format)")
      ->group(w);
  cmd.add_option("--stopwords", opts.stopwords_path, "Stop-word file, one word per line")->group(w);
  cmd.add_option("--top-k", opts.top_k, "Keep only the K heaviest features (0: all)")
      ->capture_default_str()
      ->group(w);
  cmd.add_option("--hash", opts.hash, "Feature hash: xxh3, fnv1a, md5")
      ->check(CLI::IsMember({"xxh3", "fnv1a", "md5"}))
      ->capture_default_str()
      ->group(w);
  cmd.add_option("--compat", opts.compat,
                 "Bit-for-bit compatibility: python-simhash (the Python simhash package 2.x; "
                 "ignores the options above), jieba-tfidf, none")
      ->check(CLI::IsMember({"none", "python-simhash", "jieba-tfidf"}))
      ->capture_default_str()
      ->group(w);
}

result<fingerprint_options> fingerprint_cli_options::resolve() const {
  fingerprint_options o;
  o.normalize.html = html;
  o.normalize.nfkc = !no_nfkc;
  o.normalize.casefold = !no_casefold;
  o.normalize.t2s = !no_t2s;
  o.normalize.strip_punctuation = !keep_punctuation;
  o.normalize.strip_digits = strip_digits;

  if (features == "shingles") o.features.kind = feature_kind::shingles;
  if (features == "words") o.features.kind = feature_kind::words;
  if (features == "word-ngrams") o.features.kind = feature_kind::word_ngrams;
  if (features == "jieba") o.features.kind = feature_kind::jieba;
  if (features == "keywords") o.features.kind = feature_kind::keywords;
  o.features.shingle_width = shingle_width;
  o.features.ngram = ngram;
  o.features.min_token_length = min_token_length;
  o.features.jieba_dict = jieba_dict;
  o.features.jieba_user_dicts = user_dicts;

  if (weighting == "count") o.weighting.scheme = weighting_scheme::count;
  if (weighting == "binary") o.weighting.scheme = weighting_scheme::binary;
  if (weighting == "tfidf") o.weighting.scheme = weighting_scheme::tfidf;
  o.weighting.idf_path = idf_path;
  o.weighting.stopwords_path = stopwords_path;
  o.weighting.top_k = top_k;
  if (o.weighting.scheme == weighting_scheme::tfidf && idf_path.empty()) {
    return make_error(errc::invalid_argument, "--weighting tfidf needs --idf FILE");
  }

  if (hash == "xxh3") o.hash = hash_kind::xxh3;
  if (hash == "fnv1a") o.hash = hash_kind::fnv1a;
  if (hash == "md5") o.hash = hash_kind::md5;

  if (compat == "python-simhash") o.compat = compat_mode::python_simhash;
  if (compat == "jieba-tfidf") o.compat = compat_mode::jieba_tfidf;
  o.min_features = min_features;
  return o;
}

result<detection_profile> detection_cli_options::resolve(const fingerprint_options& fingerprint,
                                                         bool batch) const {
  detection_profile p;
  p.fingerprint = fingerprint;
  p.k = k;
  auto linking = parse_linking(clusters);
  if (!linking) return with_flags(linking.error());
  p.clustering = *linking;
  p.anchor_floor = anchor_floor;
  auto mh = parse_minhash_spec(minhash);
  if (!mh) return with_flags(mh.error());
  p.minhash = *mh;
  p.verify.reset();
  if (verify != "off") {
    auto v = parse_verify_spec(verify);
    if (!v) return with_flags(v.error());
    v->max_hashes = verify_max_hashes;
    v->shingle_width = verify_shingle_width;
    v->tmp_dir = tmp_dir;
    p.verify = *v;
  }
  p = p.effective(batch);
  if (auto st = p.validate(); !st) return with_flags(st.error());
  return p;
}

void add_detection_options(CLI::App& sub, detection_cli_options& opts, const char* g,
                           bool tmp_dir) {
  sub.add_option("-k,--k", opts.k,
                 "Near duplicates: documents whose fingerprints differ in at most k of 64 bits "
                 "(inclusive, 0-" +
                     std::to_string(max_index_k) + ")")
      ->check(distance_k(max_index_k))
      ->capture_default_str()
      ->group(g);
  sub.add_option("--clusters", opts.clusters,
                 "Batch clusters: star links each duplicate directly to its representative "
                 "(chains A~B~C do not join A and C); components joins every chain "
                 "(connected components); anchored: components of verified links, members "
                 "whose Jaccard with the representative is under --anchor-floor split off "
                 "(star when --verify off); centers: clusters around the most linked "
                 "documents, every member linked to its cluster's center, so within "
                 "2 x threshold - 1 Jaccard of its representative")
      ->check(CLI::IsMember({"components", "star", "anchored", "centers"}))
      ->capture_default_str()
      ->group(g);
  sub.add_option("--minhash", opts.minhash,
                 "BANDSxROWS: MinHash-LSH bands over the verification shingles as a second "
                 "candidate generator beside SimHash (batch, with --verify; ignored with "
                 "--verify off); off: SimHash only")
      ->capture_default_str()
      ->group(g);
  sub.add_option("--anchor-floor", opts.anchor_floor,
                 "--clusters anchored: least Jaccard of a member with its representative")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->group(g);
  sub.add_option("--verify", opts.verify,
                 "jaccard:T: confirm each near pair by the Jaccard similarity of character "
                 "shingle sets, drop pairs below T; off: every pair within k is a duplicate")
      ->capture_default_str()
      ->group(g);
  sub.add_option("--verify-shingle-width", opts.verify_shingle_width,
                 "Code points per verification shingle")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->capture_default_str()
      ->group(g);
  sub.add_option("--verify-max-hashes", opts.verify_max_hashes,
                 "Keep only the N smallest shingle hashes per document (bottom-k sketch, 4*N "
                 "bytes); 0 keeps all (exact Jaccard)")
      ->capture_default_str()
      ->group(g);
  if (tmp_dir) {
    sub.add_option("--tmp-dir", opts.tmp_dir,
                   "Directory for the temporary files of --verify's shingle arrays (about 3 "
                   "bytes per distinct shingle) and, under --memory-limit, of the MinHash keys "
                   "and sketches (144 bytes per document); deleted at the end; default: the "
                   "output's staging directory next to DIR")
        ->group(g);
  }
}

void add_run_options(CLI::App& cmd, run_options& opts) {
  const char* g = "Output and errors";
  cmd.add_option("-o,--output", opts.output,
                 "Output file (\"-\": stdout); written to a temporary name, renamed on success")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--format", opts.format, "Output format: jsonl or tsv")
      ->check(CLI::IsMember({"jsonl", "tsv"}))
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--on-error", opts.on_error,
                 "Bad records (malformed JSON, missing text): fail (stop, exit 1) or skip "
                 "(count, report, exit 3)")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str()
      ->group(g);
  add_threads_option(cmd, opts.threads)->group(g);
  cmd.add_flag("--stats", opts.stats, "Always print the summary on stderr")->group(g);
  cmd.add_flag("-q,--quiet", opts.quiet, "No progress and no summary on stderr (errors only)")
      ->group(g);
}

}  // namespace simdup::cli

namespace simdup::cli {

result<std::unique_ptr<fingerprinter_set>> fingerprinter_set::create(
    const fingerprint_options& options) {
  auto fp = fingerprinter::create(options);
  if (!fp) return std::move(fp).error();
  return std::make_unique<fingerprinter_set>(std::move(*fp), options);
}

const fingerprinter& fingerprinter_set::for_document(const document& doc) const {
  if (!document_is_html(doc) || options_.normalize.html || options_.compat != compat_mode::none) {
    return plain_;
  }
  std::call_once(html_once_, [this] {
    fingerprint_options o = options_;
    o.normalize.html = true;
    // Same options as the plain one, which was created successfully: this cannot fail on
    // files; if it fails anyway, HTML records fall back to the plain pipeline.
    if (auto fp = fingerprinter::create(o)) html_.emplace(std::move(*fp));
  });
  return html_ ? *html_ : plain_;
}

namespace {

/// The flag of each library setting (parameter_info::name) that a command line sets.
std::string_view flag_of(std::string_view setting) {
  static constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
      {"k", "--k"},
      {"default_k", "--k"},
      {"min_features", "--min-features"},
      {"verify", "--verify"},
      {"verify.threshold", "--verify jaccard:T"},
      {"verify.shingle_width", "--verify-shingle-width"},
      {"default_verify", "--verify"},
      {"minhash", "--minhash"},
      {"clustering", "--clusters"},
      {"anchor_floor", "--anchor-floor"},
      {"layers", "--layers"},
      {"keep", "--keep"},
      {"against", "--against"},
      {"annotate", "--annotate"},
      {"memory_limit", "--memory-limit"},
      {"resume", "--resume"},
      {"export_dir", "--export-dir"},
  };
  for (const auto& [name, flag] : kFlags) {
    if (name == setting) return flag;
  }
  return {};
}

}  // namespace

std::string flag_message(const error_info& error) {
  if (!error.parameter) return error.message;
  const parameter_info& p = *error.parameter;
  const std::string_view flag = flag_of(p.name);
  if (flag.empty()) return error.message;
  if (!p.needs.empty()) {
    // "--clusters anchored needs --verify jaccard:T": the flag that turns `needs` on.
    const std::string_view needed = p.needs == "verify" ? "--verify jaccard:T" : flag_of(p.needs);
    if (!needed.empty()) {
      return std::string(flag) + (p.value.empty() ? "" : " " + p.value) + " needs " +
             std::string(needed);
    }
    return error.message;
  }
  return std::string(flag) + (p.reason.starts_with(':') ? "" : " ") + p.reason;
}

error_info with_flags(error_info error) {
  error.message = flag_message(error);
  return error;
}

CLI::Validator integer_range(long long min, long long max, const std::string& meaning) {
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        const std::string range =
            meaning + ": an integer from " + std::to_string(min) + " to " + std::to_string(max);
        long long v = 0;
        const char* end = value.data() + value.size();
        const auto [p, ec] = std::from_chars(value.data(), end, v);
        if (value.empty() || ec == std::errc::invalid_argument || p != end) {
          return "'" + value + "' is not a number; " + range;
        }
        const bool negative = value.front() == '-';
        if ((ec == std::errc::result_out_of_range && !negative) || v > max) {
          return value + " is too large; " + range;
        }
        if (ec == std::errc::result_out_of_range || v < min) {
          return value + (negative && min >= 0 ? " is negative; " : " is too small; ") + range;
        }
        return {};
      },
      std::to_string(min) + ".." + std::to_string(max));
}

CLI::Validator distance_k(int max_k) {
  return integer_range(0, max_k, "k counts the bits (of 64) in which two fingerprints may differ");
}

CLI::Option* add_threads_option(CLI::App& cmd, unsigned& threads) {
  return cmd.add_option("--threads", threads, "Worker threads (0: every usable core)")
      ->check(integer_range(0, max_threads, "the number of worker threads (0: every usable core)"))
      ->capture_default_str();
}

}  // namespace simdup::cli
