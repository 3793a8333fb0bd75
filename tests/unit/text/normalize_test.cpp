#include <simdup/normalize.hpp>
#include "test_paths.hpp"

#include <gtest/gtest.h>
#include <opencc/Config.hpp>
#include <opencc/Conversion.hpp>
#include <opencc/ConversionChain.hpp>
#include <opencc/Converter.hpp>
#include <opencc/DictGroup.hpp>
#include <opencc/Lexicon.hpp>
#include <opencc/SimpleConverter.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace simdup {
namespace {

normalizer make(const normalize_options& options) {
  auto n = normalizer::create(options);
  EXPECT_TRUE(n.has_value()) << (n ? "" : n.error().message);
  return std::move(n).value();
}

normalize_options all_off() {
  normalize_options o;
  o.nfkc = false;
  o.casefold = false;
  o.t2s = false;
  o.strip_punctuation = false;
  o.strip_digits = false;
  o.collapse_whitespace = false;
  return o;
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// tests/data/golden/normalize.tsv comes from Python's unicodedata (gen_normalize.py).
TEST(Normalize, GoldenVectorsMatchPythonReference) {
  std::ifstream in(std::string(SIMDUP_TEST_DATA_DIR) + "/golden/normalize.tsv");
  ASSERT_TRUE(in);
  std::string line;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string flags, input, expected;
    std::getline(fields, flags, '\t');
    std::getline(fields, input, '\t');
    std::getline(fields, expected, '\t');
    normalize_options o = all_off();
    o.nfkc = flags.find("nfkc") != std::string::npos;
    o.casefold = flags.find("casefold") != std::string::npos;
    o.strip_punctuation = flags.find("punct") != std::string::npos;
    o.strip_digits = flags.find("digits") != std::string::npos;
    o.collapse_whitespace = flags.find("collapse") != std::string::npos;
    const normalizer n = make(o);
    EXPECT_EQ(n.normalize(unhex(input)), unhex(expected)) << flags << " " << unhex(input);
    ++rows;
  }
  EXPECT_GE(rows, 200u);
}

TEST(Normalize, DefaultsOnEnglish) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("  The QUICK, brown fox -- jumps!!  "), "the quick brown fox jumps");
  EXPECT_EQ(n.normalize(""), "");
  EXPECT_EQ(n.normalize("!!! ,,, ..."), "");
}

TEST(Normalize, EachStepAlone) {
  normalize_options o = all_off();
  EXPECT_EQ(make(o).normalize("Ａ1 ,\tB"), "Ａ1 ,\tB");  // everything off: unchanged
  o.nfkc = true;
  EXPECT_EQ(make(o).normalize("Ａ１　ｂ"), "A1 b");
  o = all_off();
  o.casefold = true;
  EXPECT_EQ(make(o).normalize("ÉCOLE Straße"), "école strasse");
  EXPECT_EQ(make(o).normalize("Ａ"), "ａ");  // folded but not width-normalised
  o = all_off();
  o.strip_digits = true;
  EXPECT_EQ(make(o).normalize("a1b22 ٣c"), "ab c");
  o = all_off();
  o.strip_punctuation = true;
  EXPECT_EQ(make(o).normalize("a,b...c  d€e"), "a b c  d e");
  o = all_off();
  o.collapse_whitespace = true;
  EXPECT_EQ(make(o).normalize(" \t a \n\n b\u3000c "), "a b c");
}

// ASCII under the default options, spelled out: letters lower-cased, digits kept (or dropped),
// every other byte a separator, separator runs one space, ends trimmed.
std::string ascii_reference(std::string_view text, bool strip_digits) {
  std::string out;
  bool pending = false;
  for (char c : text) {
    const bool digit = c >= '0' && c <= '9';
    const bool alpha = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    if (digit && strip_digits) continue;
    if (!digit && !alpha) {
      pending = !out.empty();
      continue;
    }
    if (pending) out += ' ';
    pending = false;
    out += static_cast<char>(alpha ? (c | 0x20) : c);
  }
  return out;
}

TEST(Normalize, AsciiFastPathsMatchReference) {
  // Random ASCII mixing words, lone and repeated separators at every alignment, so the 16-byte
  // path and its fall-backs all run.
  const std::string alphabet = "aaaaaaaaaabcdeeeeXYZQ0123  ,.;!\t\n\x01-";
  std::uint32_t state = 12345;
  const auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  normalize_options digits_off;
  digits_off.strip_digits = true;
  const normalizer plain = make({});
  const normalizer no_digits = make(digits_off);
  for (int round = 0; round < 300; ++round) {
    std::string text(next() % 200, ' ');
    for (char& c : text) c = alphabet[(next() >> 8) % alphabet.size()];
    ASSERT_EQ(plain.normalize(text), ascii_reference(text, false)) << text;
    ASSERT_EQ(no_digits.normalize(text), ascii_reference(text, true)) << text;
  }
}

TEST(Normalize, CollapseTreatsUnicodeSpacesAndControlsAsSpace) {
  normalize_options o = all_off();
  o.collapse_whitespace = true;
  EXPECT_EQ(make(o).normalize("a\u00a0\u2003b\u2028c\x01\x7f d"), "a b c d");
}

TEST(Normalize, CombiningMarkAfterAsciiComposes) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("Cafe\u0301"), "café");
  EXPECT_EQ(n.normalize("CAFE\u0301 x"), "café x");
  normalize_options o = all_off();
  o.nfkc = true;
  EXPECT_EQ(make(o).normalize("a<\u0338b"), "a\u226Eb");  // '<' + combining long solidus
  // Out-of-order marks are reordered canonically before composing.
  EXPECT_EQ(make(o).normalize("a\u0301\u0323"), "\u1EA1\u0301");
}

TEST(Normalize, RemovesDefaultIgnorablesWithNfkc) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("soft\u00ADhyphen zero\u200Bwidth \uFEFFbom"), "softhyphen zerowidth bom");
}

TEST(Normalize, FullWidthAndCompatibilityForms) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("ＡＢＣ　ａｂｃ　１２３"), "abc abc 123");
  EXPECT_EQ(n.normalize("ｶﾀｶﾅ ﬁ ㈱"), "カタカナ fi 株");
}

TEST(Normalize, CasefoldNonAscii) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("É Ü Ø Σ Ж"), "é ü ø σ ж");
  EXPECT_EQ(n.normalize("STRASSE Straße"), "strasse strasse");
  EXPECT_EQ(n.normalize("ẞ"), "ss");
}

TEST(Normalize, InvalidUtf8ReplacedAndCounted) {
  normalize_options o;
  o.strip_punctuation = false;
  const normalizer n = make(o);
  normalize_stats stats;
  // Truncated, overlong, surrogate, lone continuation, invalid lead byte.
  const std::string bad = "a\xE4\xB8 b\xC0\xAF c\xED\xA0\x80 d\x80 e\xFF";
  EXPECT_EQ(n.normalize(bad, &stats), "a\uFFFD b\uFFFD\uFFFD c\uFFFD\uFFFD\uFFFD d\uFFFD e\uFFFD");
  EXPECT_EQ(stats.invalid_utf8, 8u);
  // With punctuation removal on, U+FFFD (a symbol) goes too, but is still counted.
  EXPECT_EQ(make({}).normalize(bad, &stats), "a b c d e");
  EXPECT_EQ(stats.invalid_utf8, 8u);
  EXPECT_EQ(make({}).normalize("fine", &stats), "fine");
  EXPECT_EQ(stats.invalid_utf8, 0u);  // stats are per call
}

TEST(Normalize, TraditionalToSimplified) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("這個"), "这个");
  EXPECT_EQ(n.normalize("漢語"), "汉语");
  EXPECT_EQ(n.normalize("經濟發展"), "经济发展");
  EXPECT_EQ(n.normalize("Hello 這個 World，發展！"), "hello 这个 world 发展");
  EXPECT_EQ(n.normalize("这个已经是简体"), "这个已经是简体");
  // Full-width text with traditional characters: NFKC, then t2s.
  EXPECT_EQ(n.normalize("ＡＢ漢語１２"), "ab汉语12");
  normalize_options o;
  o.t2s = false;
  EXPECT_EQ(make(o).normalize("這個"), "這個");
}

TEST(Normalize, TraditionalToSimplifiedPhrases) {
  const normalizer n = make({});
  EXPECT_EQ(n.normalize("老態龍鍾"), "老态龙钟");
  EXPECT_EQ(n.normalize("乾燥 乾隆"), "干燥 乾隆");
}

// normalize() converts only runs that contain a character OpenCC would change; that must give
// exactly what OpenCC gives on the whole text. Every key of the t2s dictionaries, joined in
// several ways (separated, and glued so phrases meet across keys), runs through both.
TEST(Normalize, TraditionalToSimplifiedMatchesWholeTextOpenCC) {
  const std::string config = normalizer::default_opencc_config();
  opencc::Config cfg;
  const opencc::ConverterPtr converter = cfg.NewFromFile(config);
  std::vector<std::string> keys;
  for (const auto& conversion : converter->GetConversionChain()->GetConversions()) {
    const auto group = std::dynamic_pointer_cast<opencc::DictGroup>(conversion->GetDict());
    ASSERT_NE(group, nullptr);
    for (const auto& dict : group->GetDicts()) {
      for (const auto& entry : *dict->GetLexicon()) keys.push_back(entry->Key());
    }
  }
  ASSERT_GT(keys.size(), 1000u);
  std::string text;
  const char* separators[] = {"", " ", "，", "a", "一", "", "中文"};
  for (std::size_t i = 0; i < keys.size(); ++i) text += keys[i] + separators[i % 7];
  normalize_options o;
  o.t2s = false;
  const std::string folded = make(o).normalize(text);
  const opencc::SimpleConverter whole(config);
  const normalizer n = make({});
  EXPECT_EQ(n.normalize(text), whole.Convert(folded));
  // Real traditional prose, where Debian's vim-runtime provides it.
  std::ifstream tutor("/usr/share/vim/vim90/tutor/tutor.zh_tw.utf-8", std::ios::binary);
  if (tutor) {
    const std::string prose((std::istreambuf_iterator<char>(tutor)), {});
    EXPECT_EQ(n.normalize(prose), whole.Convert(make(o).normalize(prose)));
  }
  // Already simplified text is left alone, as OpenCC would.
  const std::string simplified = whole.Convert(folded);
  EXPECT_EQ(n.normalize(simplified), whole.Convert(simplified));
}

TEST(Normalize, TraditionalToSimplifiedAcrossNul) {
  normalize_options o = all_off();
  o.t2s = true;
  const std::string text("這個\0漢語", 13);
  EXPECT_EQ(make(o).normalize(text), std::string("这个\0汉语", 13));
}

TEST(Normalize, MissingOpenccDataIsNotFound) {
  normalize_options o;
  o.opencc_config = "/nonexistent/opencc/t2s.json";
  const auto n = normalizer::create(o);
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().code, errc::not_found);
  EXPECT_NE(n.error().message.find("/nonexistent/opencc/t2s.json"), std::string::npos);
  o.t2s = false;  // not needed, not loaded
  EXPECT_TRUE(normalizer::create(o).has_value());
}

TEST(Normalize, BrokenOpenccConfigIsAnError) {
  const std::string path = ::testing::TempDir() + "simdup_broken_t2s.json";
  std::ofstream(path) << "{ this is not json";
  normalize_options o;
  o.opencc_config = path;
  const auto n = normalizer::create(o);
  ASSERT_FALSE(n.has_value());
  EXPECT_NE(n.error().message.find(path), std::string::npos);
}

TEST(Normalize, DigitsRemoval) {
  normalize_options o;
  o.strip_digits = true;
  EXPECT_EQ(make(o).normalize("Page 12 of ３４, item٥"), "page of item");
}

TEST(Normalize, PunctuationRunsBecomeOneSpace) {
  normalize_options o = all_off();
  o.strip_punctuation = true;
  EXPECT_EQ(make(o).normalize("end.Start"), "end Start");
  EXPECT_EQ(make(o).normalize("a!?…«b»"), "a b ");
  EXPECT_EQ(make(o).normalize("中文，标点。"), "中文 标点 ");
}

// The evaluation's Chinese truth (eval/truth.py): t2s, then white space and punctuation (P*,
// Z*) removed; symbols stay.
TEST(Normalize, CjkContentKeepsTheContentOfChineseText) {
  normalize_options o;
  o.strip_punctuation = false;
  o.cjk_content = true;
  const normalizer n = make(o);
  EXPECT_EQ(n.normalize("中文文本，很好。 Hi! $5 \t「引号」"), "中文文本很好hi$5引号");
  // Two editions of one text: zh-TW characters and punctuation, zh-CN with ASCII punctuation.
  EXPECT_EQ(n.normalize("中國人民， 熱愛和平。"), n.normalize("中国人民,热爱和平."));
  EXPECT_EQ(n.normalize("中國人民， 熱愛和平。"), "中国人民热爱和平");
  // Kana count as CJK; their middle dot is punctuation.
  EXPECT_EQ(n.normalize("カタカナ・テスト です"), "カタカナテストです");
}

TEST(Normalize, CjkContentLeavesLatinTextAsItWas) {
  normalize_options o;
  o.strip_punctuation = false;
  o.cjk_content = true;
  const normalizer n = make(o);
  EXPECT_EQ(n.normalize("Hello,  World! (x)"), "hello, world! (x)");
  // Under cjk_content_share of the letters: a Latin text with a Chinese navigation line.
  EXPECT_EQ(n.normalize("Sets the seed, once. 首页 新闻"), "sets the seed, once. 首页 新闻");
  // Above the share (4 of 11 letters) it is CJK text.
  EXPECT_EQ(n.normalize("abcdefg 中文字文"), "abcdefg中文字文");
  o.cjk_content = false;
  EXPECT_EQ(make(o).normalize("中文， 文本。"), "中文, 文本。");
}

TEST(Normalize, HtmlStep) {
  normalize_options o;
  o.html = true;
  const normalizer n = make(o);
  EXPECT_EQ(n.normalize("<html><head><title>T</title><style>p{color:red}</style></head>"
                        "<body><p>Caf&eacute; &amp; <b>Bar</b></p><script>var x='<p>';</script>"
                        "<div>&#x4E2D;&#25991;&nbsp;&lt;ok&gt;</div></body></html>"),
            "t café bar 中文 ok");
  // Entities decode to text, never to markup.
  o.strip_punctuation = false;
  EXPECT_EQ(make(o).normalize("&lt;b&gt;x&lt;/b&gt;"), "<b>x</b>");
  o.html = false;
  EXPECT_EQ(make(o).normalize("<b>x</b> &amp;"), "<b>x</b> &amp;");
}

TEST(Normalize, OutputMayAliasInput) {
  const normalizer n = make({});
  std::string s = "Hello, World! ＡＢＣ";
  n.normalize(s, s);
  EXPECT_EQ(s, "hello world abc");
  std::string t = "  Prefix and More ";
  n.normalize(std::string_view(t).substr(2, 6), t);
  EXPECT_EQ(t, "prefix");
}

TEST(Normalize, LongLinesAreLinear) {
  // A multi-megabyte single line of each kind: ASCII, Chinese (one long non-ASCII run, so the
  // chunked Unicode path), and HTML. Correctness spot checks, not timing.
  const normalizer n = make({});
  std::string ascii;
  while (ascii.size() < (4u << 20)) ascii += "The Quick, brown fox; ";
  const std::string a = n.normalize(ascii);
  EXPECT_EQ(a.substr(0, 20), "the quick brown fox ");
  EXPECT_EQ(a.back(), 'x');

  std::string chinese;
  while (chinese.size() < (2u << 20)) chinese += "這個漢語發展很快";
  const std::string c = n.normalize(chinese);
  EXPECT_EQ(c.substr(0, 24), "这个汉语发展很快");
  EXPECT_EQ(c.size(), chinese.size());

  normalize_options o;
  o.html = true;
  std::string html;
  while (html.size() < (2u << 20)) html += "<p class=\"x\">Caf&eacute; &amp; <b>bar</b></p>";
  const std::string h = make(o).normalize(html);
  EXPECT_EQ(h.substr(0, 15), "café bar café");
}

TEST(Normalize, ConcurrentUseIsSafe) {
  const normalizer n = make({});
  // 老態龍鍾 is a phrase: OpenCC itself runs in every thread, not only the per-character table.
  const std::string text = "Hello 這個 World，發展！ＡＢＣ Straße 老態龍鍾";
  const std::string expected = n.normalize(text);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string out;
      for (int i = 0; i < 200; ++i) {
        n.normalize(text, out);
        mismatches[t] += out != expected;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Normalize, OptionsAreKeptAndMovesWork) {
  normalize_options o;
  o.strip_digits = true;
  normalizer a = make(o);
  normalizer b = std::move(a);
  EXPECT_TRUE(b.options().strip_digits);
  EXPECT_EQ(b.normalize("a1"), "a");
}

}  // namespace
}  // namespace simdup
