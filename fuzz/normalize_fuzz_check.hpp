// What fuzz/normalize_fuzz.cpp checks on every input, shared with the replay test
// (tests/unit/text/normalize_fuzz_test.cpp) that runs without clang: UTF-8 repair, HTML to
// text, the normaliser and the fingerprinter in every mode must return, be deterministic and
// keep their documented invariants on arbitrary bytes. check() returns "" when all hold, else
// what broke.
#pragma once

#include <simdup/fingerprint.hpp>
#include <simdup/normalize.hpp>
#include <simdup/simhash.hpp>
#include <simdup/utf8.hpp>

#include "text/html.hpp"

#include <opencc/SimpleConverter.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::fuzz {

class normalize_checker {
 public:
  /// Loads every normaliser and fingerprinter configuration once; false (with `error` set) if
  /// one cannot be created.
  bool init(std::string& error) {
    const auto add_norm = [&](const char* name, normalize_options o) {
      auto n = normalizer::create(o);
      if (!n) {
        error = std::string(name) + ": " + n.error().message;
        return false;
      }
      norms_.push_back({name, std::make_unique<normalizer>(std::move(*n))});
      return true;
    };
    normalize_options all_off;
    all_off.nfkc = all_off.casefold = all_off.t2s = false;
    all_off.strip_punctuation = all_off.collapse_whitespace = false;
    normalize_options html;
    html.html = true;
    normalize_options digits;
    digits.strip_digits = true;
    normalize_options keep_spaces;
    keep_spaces.collapse_whitespace = false;
    normalize_options keep_punct;
    keep_punct.strip_punctuation = false;
    normalize_options no_nfkc;
    no_nfkc.nfkc = false;
    normalize_options no_casefold;
    no_casefold.casefold = false;
    normalize_options no_t2s;
    no_t2s.t2s = false;
    if (!add_norm("default", {}) || !add_norm("all-off", all_off) || !add_norm("html", html) ||
        !add_norm("digits", digits) || !add_norm("keep-spaces", keep_spaces) ||
        !add_norm("keep-punct", keep_punct) || !add_norm("no-nfkc", no_nfkc) ||
        !add_norm("no-casefold", no_casefold) || !add_norm("no-t2s", no_t2s)) {
      return false;
    }
    try {
      opencc_ = std::make_unique<opencc::SimpleConverter>(normalizer::default_opencc_config());
    } catch (...) {
      error = "OpenCC cannot load " + normalizer::default_opencc_config();
      return false;
    }

    const auto add_fp = [&](const char* name, fingerprint_options o) {
      auto f = fingerprinter::create(o);
      if (!f) {
        error = std::string(name) + ": " + f.error().message;
        return false;
      }
      fps_.push_back({name, o, std::make_unique<fingerprinter>(std::move(*f))});
      return true;
    };
    fingerprint_options python;
    python.compat = compat_mode::python_simhash;
    fingerprint_options jieba;
    jieba.compat = compat_mode::jieba_tfidf;
    fingerprint_options words;
    words.features.kind = feature_kind::words;
    fingerprint_options ngrams;
    ngrams.features.kind = feature_kind::word_ngrams;
    ngrams.features.min_token_length = 2;
    fingerprint_options binary;
    binary.weighting.scheme = weighting_scheme::binary;
    binary.normalize.html = true;
    fingerprint_options fnv;
    fnv.hash = hash_kind::fnv1a;
    fnv.features.shingle_width = 3;
    fingerprint_options md5;
    md5.hash = hash_kind::md5;
    md5.min_features = 3;
    fingerprint_options wide;
    wide.features.shingle_width = 9;
    return add_fp("default", {}) && add_fp("python-simhash", python) &&
           add_fp("jieba-tfidf", jieba) && add_fp("words", words) &&
           add_fp("word-ngrams", ngrams) && add_fp("binary-html", binary) &&
           add_fp("fnv1a-w3", fnv) && add_fp("md5", md5) && add_fp("xxh3-w9", wide);
  }

  /// Every check on `input` (the replay test).
  std::string check(std::string_view input) const {
    for (std::size_t which = 0; which < checks(); ++which) {
      if (auto e = check_one(which, input); !e.empty()) return e;
    }
    return "";
  }

  /// Number of checks check_one() chooses from: UTF-8 repair and HTML, each normaliser, t2s
  /// against OpenCC, each fingerprinter.
  std::size_t checks() const { return 2 + norms_.size() + fps_.size(); }

  /// One check (`which` modulo checks()): the harness runs one per input, so that an input
  /// costs one normaliser or fingerprinter pass rather than all of them (see normalize_fuzz.cpp).
  std::string check_one(std::size_t which, std::string_view input) const {
    which %= checks();
    if (which == 0) {
      if (auto e = check_utf8(input); !e.empty()) return "utf8: " + e;
      std::string html_a, html_b;
      detail::html_to_text(input, html_a);
      detail::html_to_text(input, html_b);
      if (html_a != html_b) return "html_to_text is not deterministic";
      return "";
    }
    if (which <= norms_.size()) {
      const auto& n = norms_[which - 1];
      if (auto e = check_normalizer(*n.norm, input); !e.empty()) return n.name + ": " + e;
      return "";
    }
    if (which == norms_.size() + 1) {
      // t2s converts only the runs OpenCC can change (from the first trigger on): the result
      // must be OpenCC's on the whole text. OpenCC's C-string paths stop at NUL, so skip those.
      if (input.find('\0') == std::string_view::npos) {
        const std::string whole = opencc_->Convert(norms_.back().norm->normalize(input));
        if (norms_.front().norm->normalize(input) != whole) return "t2s differs from OpenCC";
      }
      return "";
    }
    const auto& f = fps_[which - norms_.size() - 2];
    if (auto e = check_fingerprinter(f, input); !e.empty())
      return "fingerprint " + f.name + ": " + e;
    return "";
  }

 private:
  struct named_normalizer {
    std::string name;
    std::unique_ptr<normalizer> norm;
  };
  struct named_fingerprinter {
    std::string name;
    fingerprint_options options;
    std::unique_ptr<fingerprinter> fp;
  };

  static std::string check_utf8(std::string_view input) {
    std::string repaired;
    const std::size_t replaced = utf8::append_repaired(input, repaired);
    if (!utf8::is_valid(repaired)) return "repaired text is not valid UTF-8";
    if (utf8::is_valid(input) != (replaced == 0)) return "is_valid disagrees with repair";
    if (replaced == 0 && repaired != input) return "valid text changed by repair";
    if (utf8::count_code_points(repaired) != utf8::count_code_points(input))
      return "repair changed the number of code points";
    const std::size_t ascii = utf8::ascii_prefix_length(input);
    for (std::size_t i = 0; i < ascii; ++i)
      if (static_cast<unsigned char>(input[i]) >= 0x80) return "ascii prefix too long";
    if (ascii < input.size() && static_cast<unsigned char>(input[ascii]) < 0x80)
      return "ascii prefix too short";
    return "";
  }

  static std::string check_normalizer(const normalizer& n, std::string_view input) {
    normalize_stats stats;
    const std::string out = n.normalize(input, &stats);
    if (!utf8::is_valid(out)) return "output is not valid UTF-8";
    if (n.normalize(input) != out) return "not deterministic";
    std::string aliased(input);
    n.normalize(aliased, aliased);
    if (aliased != out) return "output aliasing the input differs";
    const normalize_options& o = n.options();
    if (!o.html) {
      std::string repaired;
      if (stats.invalid_utf8 != utf8::append_repaired(input, repaired))
        return "invalid_utf8 count differs from the repair count";
    }
    if (o.collapse_whitespace) {
      if (!out.empty() && (out.front() == ' ' || out.back() == ' ')) return "untrimmed space";
      if (out.find("  ") != std::string::npos) return "uncollapsed spaces";
    }
    if (o.collapse_whitespace && o.strip_punctuation && o.casefold) {
      for (char c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x80 && c != ' ' && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9'))
          return "ASCII byte " + std::to_string(u) + " survived";
      }
    }
    return "";
  }

  // Bit i set iff the weighted votes for it are positive, from the extracted features: an
  // independent path to the default pipeline's fingerprint (no streaming, no SIMD kernels).
  static uint64_t reference_vote(const std::vector<weighted_feature>& features, hash_kind kind) {
    double v[64] = {};
    for (const auto& f : features) {
      const uint64_t h = hash_feature(kind, f.text);
      for (int i = 0; i < 64; ++i) v[i] += ((h >> i) & 1) ? f.weight : -f.weight;
    }
    uint64_t fp = 0;
    for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(v[i] > 0) << i;
    return fp;
  }

  static std::string check_fingerprinter(const named_fingerprinter& f, std::string_view input) {
    const fingerprint_result r = f.fp->fingerprint(input);
    const fingerprint_result again = f.fp->fingerprint(input);
    if (r.fingerprint != again.fingerprint || r.status != again.status ||
        r.features != again.features || r.invalid_utf8 != again.invalid_utf8)
      return "not deterministic";
    fingerprint_result batch;
    const std::string_view texts[] = {input};
    f.fp->fingerprint_batch(texts, std::span<fingerprint_result>(&batch, 1));
    if (batch.fingerprint != r.fingerprint || batch.status != r.status)
      return "batch differs from single";
    const std::vector<weighted_feature> features = f.fp->features(input);
    for (const auto& w : features) {
      if (!utf8::is_valid(w.text)) return "feature is not valid UTF-8";
    }
    const compat_mode compat = f.options.compat;
    if (compat == compat_mode::none) {
      if (r.status == fingerprint_status::ok && r.features == 0) return "ok without features";
      if (r.status != fingerprint_status::ok && r.fingerprint != 0) return "too_short but non-zero";
      if (r.status == fingerprint_status::ok &&
          r.fingerprint != reference_vote(features, f.options.hash))
        return "fingerprint differs from the vote over features()";
    }
    if (compat == compat_mode::python_simhash) {
      // Simhash(text) is Simhash(counted shingles): both entry points must agree.
      if (f.fp->fingerprint_features(features).fingerprint != r.fingerprint)
        return "text and features entry points differ";
    }
    return "";
  }

  std::vector<named_normalizer> norms_;  // "default" first, "no-t2s" last
  std::unique_ptr<opencc::SimpleConverter> opencc_;
  std::vector<named_fingerprinter> fps_;
};

}  // namespace simdup::fuzz
