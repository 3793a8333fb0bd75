#include <simdup/pipeline.hpp>

#include "util/cpu.hpp"

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace simdup {

unsigned pipeline_threads(unsigned requested) {
  return requested != 0 ? requested : detail::available_cpus();
}

void run_ordered_pipeline(unsigned threads, const pipeline_stages& stages) {
  threads = pipeline_threads(threads);
  std::mutex pool_mutex;
  std::vector<void*> pool;  // idle batches
  struct free_pool {        // deletes them however the pipeline ends
    std::vector<void*>& pool;
    const pipeline_stages& stages;
    ~free_pool() {
      for (void* b : pool) stages.destroy(b);
    }
  } free_at_end{pool, stages};
  std::atomic<bool> stop{false};
  const auto take = [&]() -> void* {
    std::lock_guard lock(pool_mutex);
    if (pool.empty()) return stages.make();
    void* b = pool.back();
    pool.pop_back();
    return b;
  };
  const auto give_back = [&](void* b) {
    std::lock_guard lock(pool_mutex);
    pool.push_back(b);
  };
  namespace tbb = oneapi::tbb;
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_pipeline(
        2 * threads + 2,
        tbb::make_filter<void, void*>(tbb::filter_mode::serial_in_order,
                                      [&](tbb::flow_control& fc) -> void* {
                                        if (stop.load(std::memory_order_relaxed)) {
                                          fc.stop();
                                          return nullptr;
                                        }
                                        void* b = take();
                                        if (!stages.produce(b)) {
                                          give_back(b);
                                          fc.stop();
                                          return nullptr;
                                        }
                                        return b;
                                      }) &
            tbb::make_filter<void*, void*>(tbb::filter_mode::parallel,
                                           [&](void* b) {
                                             if (!stop.load(std::memory_order_relaxed))
                                               stages.work(b);
                                             return b;
                                           }) &
            tbb::make_filter<void*, void>(tbb::filter_mode::serial_in_order, [&](void* b) {
              if (!stop.load(std::memory_order_relaxed) && !stages.consume(b)) {
                stop.store(true, std::memory_order_relaxed);
              }
              give_back(b);
            }));
  });
}

}  // namespace simdup
