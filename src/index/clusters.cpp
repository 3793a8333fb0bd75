// Clusters over pairs: union-find (components), greedy star assignment, or clusters around centers.
#include <simdup/clusters.hpp>

#include <string>

#include <algorithm>
#include <numeric>
#include <utility>

namespace simdup {
namespace {

uint32_t find_root(std::vector<uint32_t>& parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];  // path halving
    x = parent[x];
  }
  return x;
}

// Undirected links in CSR form: the neighbours of i are adj[start[i] .. start[i + 1]). Pairs
// with an ordinal >= n or of a document with itself are left out.
struct link_graph {
  std::vector<uint32_t> start;
  std::vector<uint32_t> adj;

  link_graph(std::size_t n, std::span<const index_pair> links) : start(n + 1, 0) {
    const auto usable = [n](const index_pair& p) { return p.a < n && p.b < n && p.a != p.b; };
    for (const index_pair& p : links) {
      if (!usable(p)) continue;
      ++start[p.a + 1];
      ++start[p.b + 1];
    }
    for (std::size_t i = 1; i <= n; ++i) start[i] += start[i - 1];
    adj.resize(start[n]);
    std::vector<uint32_t> cursor(start.begin(), start.end() - 1);
    for (const index_pair& p : links) {
      if (!usable(p)) continue;
      adj[cursor[p.a]++] = p.b;
      adj[cursor[p.b]++] = p.a;
    }
  }
  // Sorts each neighbour list and drops its repeats (a pair listed twice).
  void sort_unique() {
    const std::size_t n = start.size() - 1;
    uint32_t kept = 0, begin = start[0];
    for (std::size_t i = 0; i < n; ++i) {
      const uint32_t end = start[i + 1];
      const auto first = adj.begin() + begin;
      std::sort(first, adj.begin() + end);
      const auto last = std::unique(first, adj.begin() + end);
      start[i] = kept;
      kept = static_cast<uint32_t>(std::copy(first, last, adj.begin() + kept) - adj.begin());
      begin = end;
    }
    start[n] = kept;
    adj.resize(kept);
  }
  std::span<const uint32_t> neighbours(uint32_t i) const {
    return {adj.data() + start[i], adj.data() + start[i + 1]};
  }
};

// Rounds of local moves in center_clusters: most moves happen in the first two; the cap bounds
// the time on a graph that keeps oscillating.
constexpr int kCenterMoveRounds = 8;

}  // namespace

const char* linking_name(cluster_linking linking) noexcept {
  switch (linking) {
    case cluster_linking::components:
      return "components";
    case cluster_linking::star:
      return "star";
    case cluster_linking::anchored:
      return "anchored";
    case cluster_linking::centers:
      return "centers";
  }
  return "components";
}

result<cluster_linking> parse_linking(std::string_view name) {
  for (auto l : {cluster_linking::components, cluster_linking::star, cluster_linking::anchored,
                 cluster_linking::centers}) {
    if (name == linking_name(l)) return l;
  }
  return invalid_parameter(
      {.name = "clustering",
       .value = std::string(name),
       .allowed = "components, star, anchored or centers",
       .reason = "must be components, star, anchored or centers, got '" + std::string(name) + "'"});
}

namespace {

bool keeps_pairs(cluster_linking mode) {
  return mode == cluster_linking::star || mode == cluster_linking::centers;
}

// center_clusters on a graph it makes free of repeats (a pair listed twice counts once).
std::vector<uint32_t> center_clusters(std::size_t n, link_graph graph,
                                      std::span<const uint32_t> weights) {
  const auto weight = [&](uint32_t i) -> int64_t { return weights.empty() ? 1 : weights[i]; };
  graph.sort_unique();
  // A document's partners: the documents its neighbours and its own copies stand for.
  const auto partners = [&](uint32_t i) {
    int64_t count = weight(i) - 1;
    for (uint32_t w : graph.neighbours(i)) count += weight(w);
    return count;
  };
  std::vector<int64_t> degree(n);
  for (std::size_t i = 0; i < n; ++i) degree[i] = partners(static_cast<uint32_t>(i));
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return degree[x] > degree[y]; });
  // Pivots: the most linked untaken document becomes a center and takes its untaken neighbours.
  constexpr uint32_t untaken = UINT32_MAX;
  std::vector<uint32_t> center(n, untaken);
  std::vector<int64_t> size(n, 0);  // the documents (weights) of each center's cluster
  for (uint32_t v : order) {
    if (center[v] != untaken) continue;
    center[v] = v;
    size[v] += weight(v);
    for (uint32_t w : graph.neighbours(v)) {
      if (center[w] != untaken) continue;
      center[w] = v;
      size[v] += weight(w);
    }
  }
  // Local moves. links[c]: v's links into cluster c; center_linked[c]: v is linked to center c.
  std::vector<int64_t> links(n, 0);
  std::vector<uint8_t> center_linked(n, 0);
  std::vector<uint32_t> touched;
  for (int round = 0; round < kCenterMoveRounds; ++round) {
    std::size_t moves = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = static_cast<uint32_t>(i);
      const uint32_t current = center[v];
      if (current == v && size[v] > weight(v)) continue;  // a center keeps its members
      touched.clear();
      for (uint32_t w : graph.neighbours(v)) {
        const uint32_t c = center[w];
        if (links[c] == 0) touched.push_back(c);
        links[c] += weight(w);
        if (c == w) center_linked[c] = 1;
      }
      // 2 x links - the others in the cluster: agreements minus disagreements for each of v's
      // documents there.
      const auto value = [&](uint32_t c) {
        return 2 * links[c] - (size[c] - (c == current ? weight(v) : 0));
      };
      uint32_t best = current;
      int64_t best_value = value(current);
      for (uint32_t c : touched) {
        if (c != current && center_linked[c] && value(c) > best_value) {
          best = c;
          best_value = value(c);
        }
      }
      for (uint32_t c : touched) {
        links[c] = 0;
        center_linked[c] = 0;
      }
      if (best == current) continue;
      size[current] -= weight(v);
      size[best] += weight(v);
      center[v] = best;
      ++moves;
    }
    if (moves == 0) break;
  }
  // Representative: each cluster's smallest ordinal (the first member met in ordinal order).
  std::vector<uint32_t> smallest(n, untaken), rep(n);
  for (std::size_t i = 0; i < n; ++i) {
    uint32_t& s = smallest[center[i]];
    if (s == untaken) s = static_cast<uint32_t>(i);
    rep[i] = s;
  }
  return rep;
}

}  // namespace

cluster_builder::cluster_builder(std::size_t n, cluster_linking mode, std::vector<uint32_t> weights)
    : n_(n), mode_(mode), weights_(std::move(weights)) {
  if (!keeps_pairs(mode_)) {
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), 0u);
  }
}

void cluster_builder::add(std::span<const index_pair> pairs) {
  for (const index_pair& p : pairs) {
    if (p.a >= n_ || p.b >= n_ || p.a == p.b) continue;
    if (keeps_pairs(mode_)) {
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
  if (!keeps_pairs(mode_)) {
    // Every root is its component's smallest ordinal, so parent_[i] <= i, and in ordinal order
    // parent_[parent_[i]] is already final: the forest becomes the result in place.
    for (std::size_t i = 0; i < n_; ++i) parent_[i] = parent_[parent_[i]];
    return std::move(parent_);
  }
  std::vector<uint32_t> rep(n_);
  link_graph graph(n_, pairs_);
  pairs_.clear();
  pairs_.shrink_to_fit();
  if (mode_ == cluster_linking::centers) return center_clusters(n_, std::move(graph), weights_);
  // Star: greedy in ordinal order.
  constexpr uint32_t unassigned = UINT32_MAX;
  std::fill(rep.begin(), rep.end(), unassigned);
  for (std::size_t i = 0; i < n_; ++i) {
    if (rep[i] != unassigned) continue;
    const auto r = static_cast<uint32_t>(i);
    rep[i] = r;
    for (uint32_t w : graph.neighbours(r))
      if (rep[w] == unassigned) rep[w] = r;
  }
  return rep;
}

std::vector<uint32_t> center_clusters(std::size_t n, std::span<const index_pair> links,
                                      std::span<const uint32_t> weights) {
  return center_clusters(n, link_graph(n, links), weights);
}

status anchor_clusters(std::vector<uint32_t>& rep, std::span<const index_pair> links, double floor,
                       const pair_similarity_fn& similarity) {
  const std::size_t n = rep.size();
  const link_graph graph(n, links);                 // to join the members that leave a cluster
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
      for (uint32_t y : graph.neighbours(x)) {
        if (!leaving[y]) continue;
        const uint32_t rx = find_root(parent, x), ry = find_root(parent, y);
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
