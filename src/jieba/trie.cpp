#include "jieba/trie.hpp"

#include "jieba/utf8.hpp"

#include <algorithm>

namespace simdup::detail {

void word_trie::build(std::span<const std::string_view> words, std::span<const uint64_t> freqs) {
  nodes_.assign(1, node_info{});
  edges_.clear();
  for (auto& page : root_pages_) page.reset();
  max_len_ = 0;
  // Words sharing a prefix are contiguous in sorted order, and share its byte length too, so
  // each pending node is a range of words plus a byte depth. Every node's children are made at
  // once, which keeps its edges contiguous.
  struct pending {
    std::size_t lo, hi, depth, chars;
    uint32_t node;
  };
  std::vector<pending> stack{{0, words.size(), 0, 0, 0}};
  std::vector<edge> kids;
  while (!stack.empty()) {
    pending p = stack.back();
    stack.pop_back();
    if (p.lo < p.hi && words[p.lo].size() == p.depth) {  // the prefix itself is a word
      nodes_[p.node].freq = freqs[p.lo];
      nodes_[p.node].log_freq = log_of(freqs[p.lo]);
      max_len_ = std::max(max_len_, p.chars);
      ++p.lo;
    }
    kids.clear();
    for (std::size_t i = p.lo; i < p.hi;) {
      const decoded_char c = decode_utf8(words[i], p.depth);
      std::size_t j = i + 1;
      while (j < p.hi && words[j].compare(p.depth, c.len, words[i], p.depth, c.len) == 0) ++j;
      const auto id = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back(node_info{});
      kids.push_back(edge{c.cp, id});
      stack.push_back(pending{i, j, p.depth + c.len, p.chars + 1, id});
      i = j;
    }
    if (p.node == 0) {
      std::vector<edge> far;
      for (const edge& e : kids) {
        if (e.cp < direct_root_size)
          root_slot(e.cp) = e.node;
        else
          far.push_back(e);
      }
      kids.swap(far);
    }
    nodes_[p.node].first = static_cast<uint32_t>(edges_.size());
    nodes_[p.node].count = static_cast<uint32_t>(kids.size());
    edges_.insert(edges_.end(), kids.begin(), kids.end());
  }
}

uint32_t& word_trie::root_slot(uint32_t cp) {
  static_assert(none == 0);
  auto& page = root_pages_[cp / root_page_size];
  if (page == nullptr) page.reset(new uint32_t[root_page_size]());  // all none
  return page[cp % root_page_size];
}

uint32_t word_trie::add_child(uint32_t node, uint32_t cp) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(node_info{});
  if (node == 0 && cp < direct_root_size) {
    root_slot(cp) = id;
    return id;
  }
  // Move the node's edges to the end with the new one in place: the old block becomes unused.
  // User dictionaries are small next to the base, so the waste stays small.
  const node_info n = nodes_[node];
  std::vector<edge> block(edges_.begin() + n.first, edges_.begin() + n.first + n.count);
  block.insert(std::lower_bound(block.begin(), block.end(), cp,
                                [](const edge& e, uint32_t c) { return e.cp < c; }),
               edge{cp, id});
  nodes_[node].first = static_cast<uint32_t>(edges_.size());
  nodes_[node].count = n.count + 1;
  edges_.insert(edges_.end(), block.begin(), block.end());
  return id;
}

void word_trie::set(std::span<const uint32_t> cps, uint64_t freq) {
  uint32_t node = 0;
  for (uint32_t cp : cps) {
    const uint32_t next = child(node, cp);
    node = next != none ? next : add_child(node, cp);
  }
  nodes_[node].freq = freq;
  nodes_[node].log_freq = log_of(freq);
  max_len_ = std::max(max_len_, cps.size());
}

}  // namespace simdup::detail
