// Serialises pairs from worker threads into the caller's sink, in batches.
#pragma once

#include <simdup/all_pairs.hpp>

#include <atomic>
#include <mutex>
#include <vector>

namespace simdup::detail {

class pair_emitter {
 public:
  /// `cross_split` > 0: only pairs (a, b) with a < cross_split <= b are delivered
  /// (all_pairs_options::cross_split).
  explicit pair_emitter(const pair_sink& sink, uint32_t cross_split = 0)
      : sink_(sink), cross_split_(cross_split) {}

  bool stopped() const noexcept { return stop_.load(std::memory_order_relaxed); }
  uint64_t emitted() const noexcept { return emitted_; }

  /// A worker's local batch; flushes to the sink when full and on destruction.
  class buffer {
   public:
    explicit buffer(pair_emitter& out) : out_(out) { pairs_.reserve(capacity); }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() { flush(); }

    void push(const index_pair& p) {
      if (out_.cross_split_ != 0 && !(p.a < out_.cross_split_ && p.b >= out_.cross_split_)) return;
      pairs_.push_back(p);
      if (pairs_.size() == capacity) flush();
    }
    void flush() {
      if (!pairs_.empty()) out_.deliver(pairs_);
      pairs_.clear();
    }

   private:
    static constexpr std::size_t capacity = 8192;
    pair_emitter& out_;
    std::vector<index_pair> pairs_;
  };

 private:
  void deliver(const std::vector<index_pair>& pairs) {
    std::lock_guard lock(mutex_);
    if (stop_.load(std::memory_order_relaxed)) return;
    emitted_ += pairs.size();
    if (!sink_(pairs)) stop_.store(true);
  }

  const pair_sink& sink_;
  const uint32_t cross_split_;
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  uint64_t emitted_ = 0;
};

}  // namespace simdup::detail
