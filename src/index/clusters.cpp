// Clusters over pairs: union-find (components) or greedy star assignment.
#include <simdup/clusters.hpp>

#include <string>

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

const char* linking_name(cluster_linking linking) noexcept {
  switch (linking) {
    case cluster_linking::components:
      return "components";
    case cluster_linking::star:
      return "star";
    case cluster_linking::anchored:
      return "anchored";
  }
  return "components";
}

result<cluster_linking> parse_linking(std::string_view name) {
  for (auto l : {cluster_linking::components, cluster_linking::star, cluster_linking::anchored}) {
    if (name == linking_name(l)) return l;
  }
  return make_error(
      errc::invalid_argument,
      "clustering must be components, star or anchored, got '" + std::string(name) + "'");
}

cluster_builder::cluster_builder(std::size_t n, cluster_linking mode) : n_(n), mode_(mode) {
  if (mode_ != cluster_linking::star) {
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), 0u);
  }
}

void cluster_builder::add(std::span<const index_pair> pairs) {
  for (const index_pair& p : pairs) {
    if (p.a >= n_ || p.b >= n_ || p.a == p.b) continue;
    if (mode_ == cluster_linking::star) {
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
  if (mode_ != cluster_linking::star) {
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

status anchor_clusters(std::vector<uint32_t>& rep, std::span<const index_pair> links, double floor,
                       const pair_similarity_fn& similarity) {
  const std::size_t n = rep.size();
  // Links in CSR form, to join the members that leave a cluster.
  std::vector<uint32_t> start(n + 1, 0);
  for (const index_pair& p : links) {
    if (p.a >= n || p.b >= n || p.a == p.b) continue;
    ++start[p.a + 1];
    ++start[p.b + 1];
  }
  for (std::size_t i = 1; i <= n; ++i) start[i] += start[i - 1];
  std::vector<uint32_t> adj(start[n]);
  {
    std::vector<uint32_t> cursor(start.begin(), start.end() - 1);
    for (const index_pair& p : links) {
      if (p.a >= n || p.b >= n || p.a == p.b) continue;
      adj[cursor[p.a]++] = p.b;
      adj[cursor[p.b]++] = p.a;
    }
  }
  std::vector<std::pair<uint32_t, uint32_t>> todo;  // (member, representative)
  for (std::size_t i = 0; i < n; ++i) {
    if (rep[i] != i) todo.emplace_back(static_cast<uint32_t>(i), rep[i]);
  }
  std::vector<double> sim;
  std::vector<uint32_t> left;
  std::vector<bool> leaving(n, false);
  std::vector<uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  // Every round fixes at least the new representatives, so it ends after at most n rounds.
  while (!todo.empty()) {
    if (auto st = similarity(todo, sim); !st) return st;
    left.clear();
    for (std::size_t j = 0; j < todo.size(); ++j) {
      if (!(sim[j] >= floor)) left.push_back(todo[j].first);
    }
    if (left.empty()) break;
    for (uint32_t x : left) leaving[x] = true;
    for (uint32_t x : left) {
      for (uint32_t e = start[x]; e < start[x + 1]; ++e) {
        if (!leaving[adj[e]]) continue;
        const uint32_t rx = find_root(parent, x), ry = find_root(parent, adj[e]);
        if (rx < ry)
          parent[ry] = rx;
        else if (ry < rx)
          parent[rx] = ry;
      }
    }
    todo.clear();
    for (uint32_t x : left) {
      rep[x] = find_root(parent, x);
      if (rep[x] != x) todo.emplace_back(x, rep[x]);
    }
    for (uint32_t x : left) {
      leaving[x] = false;
      parent[x] = x;
    }
  }
  return {};
}

}  // namespace simdup
