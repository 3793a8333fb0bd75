// An ordered parallel pipeline: one serial producer (the reader), parallel workers, one serial
// in-order consumer (the writer). Batches are recycled so document buffers are reused, and at
// most `2 * threads + 2` batches are alive, which bounds memory.
#pragma once

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace simdup::detail {

/// Number of worker threads for `requested` (0 = all hardware threads).
inline unsigned pipeline_threads(unsigned requested) {
  if (requested != 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

/// Runs produce -> work -> consume over batches of type Batch (default-constructible).
///  - produce(Batch&) -> bool: fills the batch (called serially, in order); false = no more
///    input (the batch is discarded).
///  - work(Batch&): processes a batch; called concurrently on different batches.
///  - consume(Batch&) -> bool: called serially in production order; false stops the pipeline
///    early (e.g. the output pipe closed): later batches are neither processed nor consumed.
template <class Batch, class Produce, class Work, class Consume>
void run_ordered_pipeline(unsigned threads, Produce&& produce, Work&& work, Consume&& consume) {
  threads = pipeline_threads(threads);
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<Batch>> pool;
  std::atomic<bool> stop{false};
  const auto take = [&]() -> Batch* {
    std::lock_guard lock(pool_mutex);
    if (pool.empty()) return new Batch();
    Batch* b = pool.back().release();
    pool.pop_back();
    return b;
  };
  const auto give_back = [&](Batch* b) {
    std::lock_guard lock(pool_mutex);
    pool.emplace_back(b);
  };
  namespace tbb = oneapi::tbb;
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_pipeline(
        2 * threads + 2,
        tbb::make_filter<void, Batch*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> Batch* {
                                         if (stop.load(std::memory_order_relaxed)) {
                                           fc.stop();
                                           return nullptr;
                                         }
                                         Batch* b = take();
                                         if (!produce(*b)) {
                                           give_back(b);
                                           fc.stop();
                                           return nullptr;
                                         }
                                         return b;
                                       }) &
            tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel,
                                             [&](Batch* b) {
                                               if (!stop.load(std::memory_order_relaxed)) work(*b);
                                               return b;
                                             }) &
            tbb::make_filter<Batch*, void>(tbb::filter_mode::serial_in_order, [&](Batch* b) {
              if (!stop.load(std::memory_order_relaxed) && !consume(*b)) {
                stop.store(true, std::memory_order_relaxed);
              }
              give_back(b);
            }));
  });
}

}  // namespace simdup::detail
