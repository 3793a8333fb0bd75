// OpenCC throws its own exception types (not derived from std::exception); every call into it
// is wrapped here so nothing escapes the library.
#include "text/t2s.hpp"

#include <simdup/utf8.hpp>

#include <utf8proc.h>
#include <opencc/Config.hpp>
#include <opencc/Conversion.hpp>
#include <opencc/ConversionChain.hpp>
#include <opencc/Converter.hpp>
#include <opencc/DictGroup.hpp>
#include <opencc/Exception.hpp>
#include <opencc/Lexicon.hpp>
#include <opencc/MaxMatchSegmentation.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

namespace simdup::detail {

namespace {

std::vector<char32_t> code_points(const std::string& s) {
  std::vector<char32_t> cps;
  for (const char* p = s.data(); p < s.data() + s.size();)
    cps.push_back(utf8::decode(p, s.data() + s.size()));
  return cps;
}

std::uint64_t pair_key(char32_t a, char32_t b) {
  return (std::uint64_t{a} << 21) | b;
}

void set_bit(std::vector<std::uint64_t>& bits, char32_t cp) {
  bits[cp >> 6] |= std::uint64_t{1} << (cp & 63);
}

// Letters, marks and the like: what the punctuation, digit and white space steps leave alone.
bool is_word_character(char32_t cp) noexcept {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category != UTF8PROC_CATEGORY_ND &&
         !(category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_SO) &&
         !(category >= UTF8PROC_CATEGORY_ZS && category <= UTF8PROC_CATEGORY_CC);
}

class key_collector {
 public:
  key_collector(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>* triggers,
                std::unordered_set<std::uint64_t>& phrase_starts)
      : keys_(keys), triggers_(triggers), phrase_starts_(phrase_starts) {}

  void add(const opencc::DictPtr& dict) {
    if (!dict) return;
    // A group's own lexicon may be unavailable; its members always have one.
    if (const auto group = std::dynamic_pointer_cast<opencc::DictGroup>(dict)) {
      for (const opencc::DictPtr& member : group->GetDicts()) add(member);
      return;
    }
    const opencc::LexiconPtr lexicon = dict->GetLexicon();
    for (const auto& entry : *lexicon) {
      const std::vector<char32_t> key = code_points(entry->Key());
      for (char32_t cp : key) {
        set_bit(keys_, cp);
        ascii_ |= cp < 0x80;
        word_characters_ &= is_word_character(cp);
      }
      if (key.size() >= 2) phrase_starts_.insert(pair_key(key[0], key[1]));
      if (triggers_ == nullptr) continue;
      // OpenCC substitutes an entry's default value; only positions where it differs from the
      // key change text (all of them when the lengths differ).
      const std::vector<char32_t> value = code_points(entry->GetDefault());
      for (char32_t cp : value) word_characters_ &= is_word_character(cp);
      for (std::size_t i = 0; i < key.size(); ++i) {
        if (value.size() != key.size() || value[i] != key[i]) set_bit(*triggers_, key[i]);
      }
    }
  }

  bool ascii() const noexcept { return ascii_; }
  bool word_characters() const noexcept { return word_characters_; }

 private:
  std::vector<std::uint64_t>& keys_;
  std::vector<std::uint64_t>* triggers_;
  std::unordered_set<std::uint64_t>& phrase_starts_;
  bool ascii_ = false;
  bool word_characters_ = true;
};

}  // namespace

result<t2s_converter> t2s_converter::load(const std::string& config_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config_path, ec)) {
    return make_error(errc::not_found, "OpenCC configuration not found: " + config_path +
                                           " (install libopencc-data, or turn off t2s)");
  }
  t2s_converter t;
  t.keys_.assign(0x110000 / 64, 0);
  t.triggers_.assign(0x110000 / 64, 0);
  try {
    opencc::Config config;
    opencc::ConverterPtr converter = config.NewFromFile(config_path);
    key_collector conversion_keys(t.keys_, &t.triggers_, t.phrase_starts_);
    for (const opencc::ConversionPtr& conversion :
         converter->GetConversionChain()->GetConversions()) {
      conversion_keys.add(conversion->GetDict());
    }
    // Segmentation decides where conversion matches start, so its keys delimit runs too; it
    // changes nothing itself.
    key_collector segmentation_keys(t.keys_, nullptr, t.phrase_starts_);
    const auto mmseg =
        std::dynamic_pointer_cast<opencc::MaxMatchSegmentation>(converter->GetSegmentation());
    if (mmseg) segmentation_keys.add(mmseg->GetDict());
    t.ascii_keys_ = conversion_keys.ascii() || segmentation_keys.ascii();
    t.word_characters_only_ =
        conversion_keys.word_characters() && segmentation_keys.word_characters();
    // Where no multi-character key can start, OpenCC segments a run into single characters
    // and converts each alone; their conversions are tabulated once here.
    t.single_chars_ = mmseg != nullptr;
    for (std::size_t word = 0; word < t.triggers_.size(); ++word) {
      for (std::uint64_t bits = t.triggers_[word]; bits != 0; bits &= bits - 1) {
        const auto cp =
            static_cast<char32_t>(word * 64 + static_cast<unsigned>(__builtin_ctzll(bits)));
        std::string one;
        utf8::append(one, cp);
        std::string converted = converter->Convert(one);
        if (converted != one) t.single_.emplace(cp, std::move(converted));
      }
    }
    t.converter_ = std::move(converter);
  } catch (const opencc::FileNotFound& e) {
    return make_error(errc::not_found, "OpenCC data missing for " + config_path + ": " + e.what());
  } catch (const opencc::Exception& e) {
    return make_error(errc::corrupt_data,
                      "cannot load OpenCC configuration " + config_path + ": " + e.what());
  } catch (const std::exception& e) {
    return make_error(errc::corrupt_data,
                      "cannot load OpenCC configuration " + config_path + ": " + e.what());
  }
  return t;
}

bool t2s_converter::may_hold_phrase(std::string_view run) const {
  if (!single_chars_) return true;
  const char* p = run.data();
  const char* const end = p + run.size();
  char32_t prev = utf8::decode(p, end);
  while (p < end) {
    const char32_t cp = utf8::decode(p, end);
    if (phrase_starts_.count(pair_key(prev, cp)) != 0) return true;
    prev = cp;
  }
  return false;
}

bool t2s_converter::convert(std::string& text, std::size_t start) const {
  try {
    std::string out;
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    const char* copied = begin;  // text before this is already in `out`
    const char* p = begin + std::min(start, text.size());
    // The run holding `start` may start earlier: step back over key code points.
    while (p > begin) {
      const char* lead = p - 1;
      while (lead > begin && utf8::detail::is_continuation(static_cast<unsigned char>(*lead)))
        --lead;
      const char* q = lead;
      if (!test(keys_, utf8::decode(q, end))) break;
      p = lead;
    }
    while (p < end) {
      if (!ascii_keys_) {
        p += utf8::ascii_prefix_length(std::string_view(p, static_cast<std::size_t>(end - p)));
        if (p == end) break;
      }
      const char* run_begin = p;
      const char* run_end = p;
      bool trigger = false;
      for (char32_t cp; p < end && test(keys_, cp = utf8::decode(p, end)); run_end = p) {
        trigger |= test(triggers_, cp);
      }
      if (!trigger) continue;  // unchanged by OpenCC; `p` is past the code point ending it
      if (out.empty()) out.reserve(text.size());
      out.append(copied, run_begin);
      copied = run_end;
      const std::string_view run(run_begin, static_cast<std::size_t>(run_end - run_begin));
      if (may_hold_phrase(run)) {
        out += converter_->Convert(std::string(run));
        continue;
      }
      // Only triggers have a table entry: other code points are copied in stretches.
      const char* unchanged = run_begin;
      for (const char* q = run_begin; q < run_end;) {
        const char* const from = q;
        const char32_t cp = utf8::decode(q, run_end);
        if (!test(triggers_, cp)) continue;
        const auto it = single_.find(cp);
        if (it == single_.end()) continue;
        out.append(unchanged, from);
        out += it->second;
        unchanged = q;
      }
      out.append(unchanged, run_end);
    }
    if (copied == begin) return true;  // no runs: unchanged
    out.append(copied, end);
    text = std::move(out);
    return true;
  } catch (const opencc::Exception&) {
  } catch (const std::exception&) {
  }
  return false;
}

}  // namespace simdup::detail
