#include "dedup/pair_jaccard.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

namespace simdup::detail {
namespace {

// Decoded arrays by ordinal, direct-mapped: in clusters of near duplicates the same documents
// meet again and again, and reading and decoding an array costs more than comparing two.
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
  bool holds(uint32_t ordinal) const { return keys_[ordinal % kSlots] == ordinal; }

 private:
  static constexpr std::size_t kSlots = 64;
  std::vector<uint32_t> keys_ = std::vector<uint32_t>(kSlots, UINT32_MAX);
  std::vector<std::vector<uint32_t>> arrays_ = std::vector<std::vector<uint32_t>>(kSlots);
};

}  // namespace

status pair_jaccards(const shingle_store& store, std::span<jaccard_job> jobs,
                     std::size_t max_hashes, double threshold, std::span<double> out) {
  // Most candidate pairs of a large k fail on their sizes alone (one set under 80% of the
  // other), which the store knows without reading: only the rest are read and merged.
  if (max_hashes == 0) {
    std::size_t left = 0;
    for (const jaccard_job& job : jobs) {
      if (const auto ruled_out =
              jaccard_size_bound(store.count(job.a), store.count(job.b), threshold)) {
        out[job.slot] = *ruled_out;
      } else {
        jobs[left++] = job;
      }
    }
    jobs = jobs.first(left);
  }
  std::sort(jobs.begin(), jobs.end(), [](const jaccard_job& x, const jaccard_job& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i == 0 || jobs[i].a != jobs[i - 1].a) starts.push_back(i);
  }
  starts.push_back(jobs.size());
  const bool bounded = max_hashes == 0 && threshold > 0;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  status outcome;
  // Per call, so no cache outlives its store.
  tbb::enumerable_thread_specific<decoded_cache> caches;
  tbb::enumerable_thread_specific<std::vector<uint32_t>> firsts;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, starts.size() - 1), [&](const auto& range) {
    decoded_cache& cache = caches.local();
    std::vector<uint32_t>& first = firsts.local();  // a copy: the cache may evict its slot
    std::array<uint32_t, 256> counts_a{}, counts_b{};
    const auto fail = [&](status st) {
      std::lock_guard lock(mutex);
      if (outcome) outcome = std::move(st);
      failed = true;
    };
    for (std::size_t g = range.begin(); g != range.end() && !failed; ++g) {
      if (auto st = store.get(jobs[starts[g]].a, first); !st) return fail(std::move(st));
      if (bounded) {
        counts_a.fill(0);
        for (const uint32_t h : first) ++counts_a[h >> 24];
      }
      const std::vector<uint32_t>* second = nullptr;
      for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
        if (bounded && !cache.holds(jobs[i].b)) {
          // Shared hashes have the same top 8 bits: per value, at most the smaller count. Pairs
          // of unrelated or loosely related texts fail this from 1/25 of the array's bytes.
          if (auto st = store.top_byte_counts(jobs[i].b, counts_b); !st) {
            return fail(std::move(st));
          }
          std::size_t most_shared = 0;
          for (std::size_t v = 0; v < counts_a.size(); ++v) {
            most_shared += std::min(counts_a[v], counts_b[v]);
          }
          if (const auto ruled_out = jaccard_shared_bound(most_shared, first.size(),
                                                          store.count(jobs[i].b), threshold)) {
            out[jobs[i].slot] = *ruled_out;
            continue;
          }
        }
        if (auto st = cache.get(store, jobs[i].b, second); !st) return fail(std::move(st));
        out[jobs[i].slot] = max_hashes != 0 ? sketch_jaccard(first, *second, max_hashes)
                                            : jaccard_at_least(first, *second, threshold);
      }
    }
  });
  return outcome;
}

}  // namespace simdup::detail
