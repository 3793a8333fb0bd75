// The prefix dictionary: a trie over code points whose nodes are exactly jieba's FREQ keys (every
// word and every prefix of a word), with the word's frequency (0 for a prefix only).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace simdup::detail {

class word_trie {
 public:
  /// Node 0 is the root (the empty string); it is nobody's child, so 0 also means "no node".
  static constexpr uint32_t none = 0;

  /// Builds from distinct words sorted by their UTF-8 bytes (which is code-point order), each
  /// valid UTF-8 and non-empty, with their frequencies.
  void build(std::span<const std::string_view> sorted_words, std::span<const uint64_t> freqs);

  /// The node of prefix + cp, or none.
  uint32_t child(uint32_t node, uint32_t cp) const noexcept {
    if (node == 0 && cp < direct_root_size) {
      const uint32_t* page = root_pages_[cp / root_page_size].get();
      return page != nullptr ? page[cp % root_page_size] : none;
    }
    const node_info& n = nodes_[node];
    const edge* first = edges_.data() + n.first;
    const edge* last = first + n.count;
    if (n.count <= 8) {
      for (; first != last; ++first)
        if (first->cp == cp) return first->node;
      return none;
    }
    while (first < last) {  // binary search
      const edge* mid = first + (last - first) / 2;
      if (mid->cp < cp)
        first = mid + 1;
      else
        last = mid;
    }
    return (first != edges_.data() + n.first + n.count && first->cp == cp) ? first->node : none;
  }

  /// The node of a whole code-point sequence, or none.
  uint32_t find(std::span<const uint32_t> cps) const noexcept {
    uint32_t node = 0;
    for (uint32_t cp : cps) {
      node = child(node, cp);
      if (node == none) return none;
    }
    return node;
  }

  uint64_t freq(uint32_t node) const noexcept { return nodes_[node].freq; }
  /// log(freq), or log(1) = 0 for a prefix-only node (jieba's `FREQ.get(w) or 1`).
  double log_freq(uint32_t node) const noexcept { return nodes_[node].log_freq; }

  /// Inserts `cps` (and its prefixes with frequency 0 where new) or updates its frequency.
  void set(std::span<const uint32_t> cps, uint64_t freq);

  /// Longest word in code points (bounds how far a word can reach across a position).
  std::size_t max_word_length() const noexcept { return max_len_; }
  std::size_t node_count() const noexcept { return nodes_.size(); }

 private:
  struct node_info {
    uint32_t first = 0;  ///< index of the first child edge in edges_
    uint32_t count = 0;  ///< children, sorted by code point
    uint64_t freq = 0;
    double log_freq = 0.0;
  };
  struct edge {
    uint32_t cp;
    uint32_t node;
  };
  static double log_of(uint64_t freq) { return freq ? std::log(static_cast<double>(freq)) : 0.0; }
  uint32_t add_child(uint32_t node, uint32_t cp);

  std::vector<node_info> nodes_;
  std::vector<edge> edges_;
  /// The root's slot for `cp` (below direct_root_size), its page made if missing.
  uint32_t& root_slot(uint32_t cp);

  /// The root's children below U+10000 by direct index, the first step of every walk, in
  /// pages of 256 code points made where a child falls: a flat table (256 KiB) had to be
  /// allocated and cleared by every load, and a dictionary fills few pages (Latin, CJK).
  static constexpr std::size_t direct_root_size = 0x10000;
  static constexpr std::size_t root_page_size = 256;
  std::array<std::unique_ptr<uint32_t[]>, direct_root_size / root_page_size> root_pages_;
  std::size_t max_len_ = 0;
};

}  // namespace simdup::detail
