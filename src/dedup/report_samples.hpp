// The clusters of a dedup run as the summary and the report show them: how many of each size,
// and the largest with a few members each, whose texts are fetched when the records are read
// again (the job keeps no texts).
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/document.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace simdup::detail {

/// The report's sample clusters: which ordinals to fetch, then their texts.
class sample_collector {
 public:
  /// Clusters as (representative ordinal, size, member ordinals in display order).
  struct cluster {
    uint32_t representative;
    uint64_t size;
    std::vector<uint32_t> members;
  };
  /// `all_html`: the run reads every text as HTML (normalize_options::html); otherwise texts
  /// that document_is_html says are HTML are.
  sample_collector(std::vector<cluster> clusters, bool all_html);
  /// True when `ordinal`'s text is needed.
  bool wants(uint32_t ordinal) const { return wanted_.count(ordinal) != 0; }
  /// The largest ordinal needed (a re-read may stop after it); nullopt when none.
  std::optional<uint32_t> last() const;
  /// Keeps `doc`'s text if wanted: as the job compared it, so an HTML document's text without
  /// its markup.
  void take(uint32_t ordinal, const document& doc);
  /// Builds the report's samples (decisions give layer, distance and Jaccard of members).
  std::vector<cluster_sample> build(
      const std::function<dedup_decision(uint32_t)>& decision_of) const;

 private:
  std::vector<cluster> clusters_;
  bool all_html_;
  std::unordered_map<uint32_t, std::pair<std::string, std::string>> wanted_;  // id, text
};

/// Batch mode: counts the clusters of `decisions` by size into summary.cluster_sizes and
/// returns the `top` largest (ties: earlier representative first), each with up to `members`
/// members, near duplicates farthest from the representative first.
std::vector<sample_collector::cluster> batch_sample_clusters(
    const std::vector<dedup_decision>& decisions, dedup_summary& summary, std::size_t top,
    std::size_t members);

/// Stream mode: the clusters as documents are decided (sizes and the first members), since
/// no list of all decisions is kept.
class stream_clusters {
 public:
  /// Keeps up to `members` members per cluster for the report.
  explicit stream_clusters(std::size_t members) : members_(members) {}
  /// A dropped document joins its representative's cluster.
  void add_duplicate(uint32_t ordinal, const dedup_decision& decision);
  /// Counts the clusters by size into summary.cluster_sizes (kept documents without duplicates
  /// are clusters of one) and returns the `top` largest (ties: earlier representative first).
  std::vector<sample_collector::cluster> sample_clusters(dedup_summary& summary,
                                                         std::size_t top) const;
  /// The decisions of the members kept for the report, by ordinal.
  std::unordered_map<uint32_t, dedup_decision> member_decisions() const;

 private:
  struct cluster {
    uint64_t size = 1;
    std::vector<std::pair<uint32_t, dedup_decision>> members;
  };
  std::size_t members_;
  std::unordered_map<uint32_t, cluster> clusters_;
};

}  // namespace simdup::detail
