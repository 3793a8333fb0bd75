// Clusters over pairs: union-find (components) or greedy star assignment.
#include <simdup/clusters.hpp>

#include <algorithm>
#include <numeric>

namespace simdup {
namespace {

uint32_t find_root(std::vector<uint32_t>& parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];  // path halving
    x = parent[x];
  }
  return x;
}

}  // namespace

cluster_builder::cluster_builder(std::size_t n, cluster_mode mode) : n_(n), mode_(mode) {
  if (mode_ == cluster_mode::components) {
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), 0u);
  }
}

void cluster_builder::add(std::span<const index_pair> pairs) {
  for (const index_pair& p : pairs) {
    if (p.a >= n_ || p.b >= n_ || p.a == p.b) continue;
    if (mode_ == cluster_mode::star) {
      pairs_.push_back(p);
      continue;
    }
    const uint32_t ra = find_root(parent_, p.a), rb = find_root(parent_, p.b);
    // The smaller root wins, so every root is its component's smallest ordinal.
    if (ra < rb)
      parent_[rb] = ra;
    else if (rb < ra)
      parent_[ra] = rb;
  }
}

std::vector<uint32_t> cluster_builder::finish() {
  std::vector<uint32_t> rep(n_);
  if (mode_ == cluster_mode::components) {
    for (std::size_t i = 0; i < n_; ++i) rep[i] = find_root(parent_, static_cast<uint32_t>(i));
    return rep;
  }
  // Star: adjacency in CSR form, then greedy in ordinal order.
  std::vector<uint32_t> start(n_ + 1, 0);
  for (const index_pair& p : pairs_) {
    ++start[p.a + 1];
    ++start[p.b + 1];
  }
  for (std::size_t i = 1; i <= n_; ++i) start[i] += start[i - 1];
  std::vector<uint32_t> adj(start[n_]);
  std::vector<uint32_t> cursor(start.begin(), start.end() - 1);
  for (const index_pair& p : pairs_) {
    adj[cursor[p.a]++] = p.b;
    adj[cursor[p.b]++] = p.a;
  }
  pairs_.clear();
  pairs_.shrink_to_fit();
  constexpr uint32_t unassigned = UINT32_MAX;
  std::fill(rep.begin(), rep.end(), unassigned);
  for (std::size_t i = 0; i < n_; ++i) {
    if (rep[i] != unassigned) continue;
    const auto r = static_cast<uint32_t>(i);
    rep[i] = r;
    for (uint32_t e = start[i]; e < start[i + 1]; ++e)
      if (rep[adj[e]] == unassigned) rep[adj[e]] = r;
  }
  return rep;
}

}  // namespace simdup
