// Index maintenance of the RocksDB backend: writers insert into a collection's index without
// sealing or merging its segments (index_options sets maintain_on_insert off); full segments are
// set aside and sealed and merged here, on a thread of their own, so that no writer holds the
// collection lock through a merge.
#include <cstdio>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

void rocks_backend::request_maintenance(collection_state& c) {
  {
    std::lock_guard lock(maint_mu_);
    if (c.maintenance_queued) return;
    c.maintenance_queued = true;
    maint_queue_.push_back(c.shared_from_this());
  }
  maint_cv_.notify_one();
}

void rocks_backend::after_index_change(collection_state& c) {
  // Set-aside segments are probed as hash chains, each one costing every query, and take
  // about twice a sealed segment's memory (9 MB each with 10 tables); past this many, the
  // writer seals them itself (waiting for a merge in progress, if one is). At 200,000 inserts/s
  // a merge of 4M entries sets aside about three; a bulk load at 700,000/s set aside 20 to 30
  // while one ran, on top of the merge's own transient.
  constexpr std::size_t max_set_aside = 8;
  const std::size_t waiting = c.index.awaiting_maintenance();
  if (waiting > max_set_aside) {
    try {
      c.index.maintain();
    } catch (const std::exception&) {
      request_maintenance(c);
    }
  } else if (waiting > 0) {
    request_maintenance(c);
  }
}

void rocks_backend::maintenance_loop() {
  std::unique_lock lock(maint_mu_);
  for (;;) {
    maint_cv_.wait(lock, [this] { return maint_stop_ || !maint_queue_.empty(); });
    // At close the segments still set aside are saved as they are (save() covers them).
    if (maint_stop_) return;
    std::shared_ptr<collection_state> c = std::move(maint_queue_.front());
    maint_queue_.pop_front();
    c->maintenance_queued = false;
    lock.unlock();
    try {
      c->index.maintain();
    } catch (const std::exception& e) {
      // Out of memory while merging: the segments stay set aside (and queried) and the next
      // write asks again.
      std::fprintf(stderr, "simdup serve: index maintenance of %s failed: %s\n",
                   c->config.name.c_str(), e.what());
    }
    lock.lock();
  }
}

}  // namespace simdup::detail
