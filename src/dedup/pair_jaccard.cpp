#include "dedup/pair_jaccard.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <numeric>

namespace simdup::detail {
namespace {

// Decoded arrays by ordinal, direct-mapped, with the counts of their hashes' top bytes: in
// clusters of near duplicates the same documents meet again and again, and reading and
// decoding an array costs more than comparing two. A family of 20 re-crawled copies and the
// families it touches fit.
class decoded_cache {
 public:
  struct entry {
    std::vector<uint32_t> hashes;
    std::array<uint32_t, 256> top_bytes{};
  };
  status get(const shingle_store& store, uint32_t ordinal, const entry*& out) {
    const std::size_t slot = ordinal % kSlots;
    if (keys_[slot] != ordinal) {
      keys_[slot] = UINT32_MAX;
      entry& e = entries_[slot];
      if (auto st = store.get(ordinal, e.hashes); !st) return st;
      e.top_bytes.fill(0);
      for (const uint32_t h : e.hashes) ++e.top_bytes[h >> 24];
      keys_[slot] = ordinal;
    }
    out = &entries_[slot];
    return {};
  }
  const entry* find(uint32_t ordinal) const {
    const std::size_t slot = ordinal % kSlots;
    return keys_[slot] == ordinal ? &entries_[slot] : nullptr;
  }
  // The top-byte counts of a document, from its decoded array when cached, else read alone
  // and kept apart: most partners fail on them, and each is the partner of a whole family.
  status top_bytes(const shingle_store& store, uint32_t ordinal,
                   const std::array<uint32_t, 256>*& out) {
    if (const entry* e = find(ordinal)) {
      out = &e->top_bytes;
      return {};
    }
    const std::size_t slot = ordinal % kCountSlots;
    if (count_keys_[slot] != ordinal) {
      count_keys_[slot] = UINT32_MAX;
      if (auto st = store.top_byte_counts(ordinal, counts_[slot]); !st) return st;
      count_keys_[slot] = ordinal;
    }
    out = &counts_[slot];
    return {};
  }

 private:
  static constexpr std::size_t kSlots = 256;
  static constexpr std::size_t kCountSlots = 1024;
  std::vector<uint32_t> keys_ = std::vector<uint32_t>(kSlots, UINT32_MAX);
  std::vector<entry> entries_ = std::vector<entry>(kSlots);
  std::vector<uint32_t> count_keys_ = std::vector<uint32_t>(kCountSlots, UINT32_MAX);
  std::vector<std::array<uint32_t, 256>> counts_ =
      std::vector<std::array<uint32_t, 256>>(kCountSlots);
};

// Sorts the jobs for the cache: groups (jobs of one `a`) in breadth-first order of the pair
// graph, each group by b. The members of a family of near duplicates are then compared one
// after the other, on one thread, so each is read from the file once and then found in that
// thread's cache; in ordinal order, the copies of a document crawled weeks apart are as far
// apart as the whole input, and unrelated documents pass through the cache in between.
void sort_for_cache(std::span<jaccard_job> jobs) {
  // Dense ids of the ordinals: (ordinal, end of a job) sorted, so equal ordinals are adjacent.
  std::vector<uint64_t> ends(2 * jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ends[2 * i] = uint64_t{jobs[i].a} << 32 | (2 * i);
    ends[2 * i + 1] = uint64_t{jobs[i].b} << 32 | (2 * i + 1);
  }
  tbb::parallel_sort(ends.begin(), ends.end());
  std::vector<uint32_t> id(ends.size());
  std::size_t ids = 0;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    if (k > 0 && ends[k] >> 32 != ends[k - 1] >> 32) ++ids;
    id[ends[k] & UINT32_MAX] = static_cast<uint32_t>(ids);
  }
  ids += jobs.empty() ? 0 : 1;
  std::vector<uint64_t>().swap(ends);
  // The graph as adjacency lists; the other end of id[e] is id[e ^ 1].
  std::vector<uint32_t> first(ids + 1, 0), edges(id.size());
  for (const uint32_t v : id) ++first[v + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (std::size_t e = 0; e < id.size(); ++e) edges[fill[id[e]]++] = id[e ^ 1];
  }
  std::vector<uint32_t> rank(ids, UINT32_MAX), queue;
  queue.reserve(ids);
  for (uint32_t root = 0; root < ids; ++root) {
    if (rank[root] != UINT32_MAX) continue;
    std::size_t head = queue.size();
    rank[root] = static_cast<uint32_t>(queue.size());
    queue.push_back(root);
    for (; head < queue.size(); ++head) {
      const uint32_t v = queue[head];
      for (uint32_t e = first[v]; e < first[v + 1]; ++e) {
        if (rank[edges[e]] != UINT32_MAX) continue;
        rank[edges[e]] = static_cast<uint32_t>(queue.size());
        queue.push_back(edges[e]);
      }
    }
  }
  struct keyed {
    uint32_t rank;  // of a
    jaccard_job job;
  };
  std::vector<keyed> order(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) order[i] = {rank[id[2 * i]], jobs[i]};
  tbb::parallel_sort(order.begin(), order.end(), [](const keyed& x, const keyed& y) {
    return x.rank != y.rank ? x.rank < y.rank : x.job.b < y.job.b;
  });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = order[i].job;
}

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
  sort_for_cache(jobs);
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
    std::array<uint32_t, 256> counts_a{};
    const auto fail = [&](status st) {
      std::lock_guard lock(mutex);
      if (outcome) outcome = std::move(st);
      failed = true;
    };
    for (std::size_t g = range.begin(); g != range.end() && !failed; ++g) {
      const decoded_cache::entry* entry = nullptr;
      if (auto st = cache.get(store, jobs[starts[g]].a, entry); !st) return fail(std::move(st));
      first = entry->hashes;
      counts_a = entry->top_bytes;
      for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
        const decoded_cache::entry* second = cache.find(jobs[i].b);
        if (bounded) {
          // Shared hashes have the same top 8 bits: per value, at most the smaller count. Pairs
          // of unrelated or loosely related texts fail this from 1/25 of the array's bytes.
          const std::array<uint32_t, 256>* counts_b = nullptr;
          if (auto st = cache.top_bytes(store, jobs[i].b, counts_b); !st) {
            return fail(std::move(st));
          }
          std::size_t most_shared = 0;
          for (std::size_t v = 0; v < counts_a.size(); ++v) {
            most_shared += std::min(counts_a[v], (*counts_b)[v]);
          }
          if (const auto ruled_out = jaccard_shared_bound(most_shared, first.size(),
                                                          store.count(jobs[i].b), threshold)) {
            out[jobs[i].slot] = *ruled_out;
            continue;
          }
        }
        if (second == nullptr) {
          if (auto st = cache.get(store, jobs[i].b, second); !st) return fail(std::move(st));
        }
        out[jobs[i].slot] = max_hashes != 0 ? sketch_jaccard(first, second->hashes, max_hashes)
                                            : jaccard_at_least(first, second->hashes, threshold);
      }
    }
  });
  return outcome;
}

}  // namespace simdup::detail
