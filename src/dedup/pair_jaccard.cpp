#include "dedup/pair_jaccard.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace simdup::detail {
namespace {

// Decoded arrays by ordinal, direct-mapped: in clusters of near duplicates the same documents
// meet again and again, and decoding an array (a chain of varints) costs more than comparing.
class decoded_cache {
 public:
  status get(const shingle_store& store, uint32_t ordinal, const std::vector<uint32_t>*& out) {
    const std::size_t slot = ordinal % kSlots;
    if (keys_[slot] != ordinal) {
      keys_[slot] = UINT32_MAX;
      if (auto st = store.get(ordinal, arrays_[slot]); !st) return st;
      keys_[slot] = ordinal;
    }
    out = &arrays_[slot];
    return {};
  }

 private:
  static constexpr std::size_t kSlots = 64;
  std::vector<uint32_t> keys_ = std::vector<uint32_t>(kSlots, UINT32_MAX);
  std::vector<std::vector<uint32_t>> arrays_ = std::vector<std::vector<uint32_t>>(kSlots);
};

}  // namespace

status pair_jaccards(const shingle_store& store, std::span<jaccard_job> jobs,
                     std::size_t max_hashes, double threshold, std::span<double> out) {
  std::sort(jobs.begin(), jobs.end(), [](const jaccard_job& x, const jaccard_job& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i == 0 || jobs[i].a != jobs[i - 1].a) starts.push_back(i);
  }
  starts.push_back(jobs.size());
  std::atomic<bool> failed{false};
  std::mutex mutex;
  status outcome;
  // Per call, so no cache outlives its store.
  tbb::enumerable_thread_specific<decoded_cache> caches;
  tbb::enumerable_thread_specific<std::vector<uint32_t>> firsts;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, starts.size() - 1), [&](const auto& range) {
    decoded_cache& cache = caches.local();
    std::vector<uint32_t>& first = firsts.local();  // a copy: the cache may evict its slot
    const auto fail = [&](status st) {
      std::lock_guard lock(mutex);
      if (outcome) outcome = std::move(st);
      failed = true;
    };
    for (std::size_t g = range.begin(); g != range.end() && !failed; ++g) {
      if (auto st = store.get(jobs[starts[g]].a, first); !st) return fail(std::move(st));
      const std::vector<uint32_t>* second = nullptr;
      for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
        if (auto st = cache.get(store, jobs[i].b, second); !st) return fail(std::move(st));
        out[jobs[i].slot] = max_hashes != 0 ? sketch_jaccard(first, *second, max_hashes)
                                            : jaccard_at_least(first, *second, threshold);
      }
    }
  });
  return outcome;
}

}  // namespace simdup::detail
