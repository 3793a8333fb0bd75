// The signer normalises each document once (normalizer_pair) and still signs it as its first
// definition did: the fingerprint of the text normalised under the fingerprint's options, and
// the shingles of the text normalised under verify_normalize_options, each on its own.
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/normalize.hpp>
#include <simdup/verify.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace simdup {
namespace {

document make_document(std::string text) {
  document doc;
  doc.id = "d";
  doc.text = std::move(text);
  return doc;
}

TEST(DocumentSigner, SignsAsTwoSeparateNormalisationsDid) {
  const dedup_options options;
  ASSERT_TRUE(options.detection.verify);
  auto signer = document_signer::create(options);
  ASSERT_TRUE(signer) << signer.error().message;
  const std::vector<std::string> texts = {
      // English with punctuation, digits and symbols that NFKC turns into letters.
      "The quick brown fox, (jumps) over 42 lazy dogs! It was 30\xe2\x84\x83 and \xe2\x91\xb4 "
      "\xef\xac\x81nal: Stra\xc3\x9f"
      "e caf\xc3\xa9 cafe\xcc\x81 -- \xe2\x80\x9cquoted\xe2\x80\x9d",
      // Traditional Chinese with its punctuation, a t2s phrase and full-width forms.
      "\xe8\x87\xba\xe7\x81\xa3\xe7\x9a\x84\xe5\xa4\xa9\xe6\xb0\xa3\xe5\xbe\x88\xe4\xb9\xbe\xe7\x87"
      "\xa5\xef\xbc\x8c\xe6\x88\x91\xe5\x80\x91\xe5\x8e\xbb\xe5\x9c\x96\xe6\x9b\xb8\xe9\xa4\xa8\xe3"
      "\x80\x82\xe3\x80\x8c\xe9\xab\x94\xe8\x82\xb2\xe3\x80\x8d\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3"
      " 2026\xe5\xb9\xb4",
      // Mixed: English quoting Chinese (CJK share below cjk_content_share) and kana.
      "Breaking news from Taipei: officials said \xe4\xb8\xad\xe6\x96\x87 and "
      "\xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a words appear, with more text after them",
      // HTML (opens with a page tag): tags, entities, a script body.
      "<!DOCTYPE html><html><body><p>Caf&eacute; &amp; bar &#x4e2d;&#25991;</p><script>var "
      "x=1;</script><b>bo</b>ld, text&nbsp;here and some more words to fingerprint</body></html>",
      // Invalid UTF-8 between words, and a soft hyphen and zero-width space.
      "broken \xff\xfe bytes \xc3 here \xe4\xb8 and \xed\xa0\x80 sur\xc2\xadro\xe2\x80\x8bgate "
      "text that goes on long enough to have features"};
  for (const std::string& text : texts) {
    const document doc = make_document(text);
    doc_signature sig;
    signer->sign(doc, sig);

    fingerprint_options fp_options = options.detection.fingerprint;
    fp_options.normalize.html = document_is_html(doc);
    auto fingerprint_normalizer = normalizer::create(fp_options.normalize);
    auto verify_normalizer = normalizer::create(verify_normalize_options(fp_options.normalize));
    auto fp = fingerprinter::create(fp_options);
    ASSERT_TRUE(fingerprint_normalizer && verify_normalizer && fp);
    normalize_stats stats;
    const std::string normalized = fingerprint_normalizer->normalize(text, &stats);
    const fingerprint_result expected = fp->fingerprint(text);
    ASSERT_EQ(expected.status, fingerprint_status::ok) << text;
    EXPECT_TRUE(sig.has_fingerprint) << text;
    EXPECT_EQ(sig.fingerprint, expected.fingerprint) << text;
    EXPECT_EQ(sig.content_key, exact_key(normalized)) << text;
    EXPECT_EQ(sig.invalid_utf8, stats.invalid_utf8) << text;
    std::vector<uint32_t> shingles;
    shingle_hashes(verify_normalizer->normalize(text), options.detection.verify->shingle_width,
                   options.detection.verify->max_hashes, shingles);
    EXPECT_EQ(sig.shingles, shingles) << text;
  }
}

}  // namespace
}  // namespace simdup
