// Words and weighted features, the vocabulary shared by the segmenters (jieba.hpp), the records
// (document.hpp) and the fingerprinter (fingerprint.hpp). Part of the text component, so that
// jieba and io need not depend on features.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// A feature and its weight, as extracted from text or supplied by the caller.
struct weighted_feature {
  std::string text;
  double weight = 1.0;
};

/// Splits normalised text into words. Implemented by the jieba segmenter; the extension point
/// for any other language-specific tokenizer. Must be safe to call concurrently.
class segmenter {
 public:
  virtual ~segmenter() = default;
  /// Appends the words of `text` (views into `text`) to `words`.
  virtual void segment(std::string_view text, std::vector<std::string_view>& words) const = 0;
};

}  // namespace simdup
