// Service metrics in the Prometheus text exposition format (version 0.0.4).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace simdup::detail {

class metrics {
 public:
  /// Counts one request to `endpoint` answered with `status`, taking `seconds`.
  void observe_request(const std::string& endpoint, int status, double seconds);
  /// Counts documents answered with `outcome` (new, duplicate, unique, inserted, expired,
  /// too_short).
  void count_documents(const std::string& collection, const std::string& outcome, uint64_t n);

  /// Per-collection gauges and counters taken from the store when rendering.
  struct collection_sample {
    uint64_t documents = 0;
    uint64_t expired = 0;
    uint64_t deleted = 0;
    uint64_t index_bytes = 0;
    uint64_t id_map_bytes = 0;
  };
  /// The exposition text; `collections` supplies the store's figures, `event_loops` the HTTP
  /// server's thread count.
  std::string render(const std::map<std::string, collection_sample>& collections,
                     int event_loops) const;

 private:
  /// Upper bounds of the latency buckets, in seconds (+Inf is implicit).
  static constexpr std::array<double, 11> bounds_ = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,  0.5,   1.0};
  struct histogram {
    std::array<uint64_t, bounds_.size()> buckets{};  // non-cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, histogram> latency_;
  std::map<std::pair<std::string, std::string>, uint64_t> documents_;
};

}  // namespace simdup::detail
