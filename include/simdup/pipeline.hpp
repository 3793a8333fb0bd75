// An ordered parallel pipeline: one serial producer (the reader), parallel workers, one serial
// in-order consumer (the writer). Batches are recycled so document buffers are reused, and at
// most `2 * threads + 2` batches are alive, which bounds memory.
#pragma once

#include <functional>

namespace simdup {

/// Number of worker threads for `requested`; 0: one per CPU of the process's affinity mask.
unsigned pipeline_threads(unsigned requested);

/// The stages over type-erased batches; run_ordered_pipeline<Batch> below fills them.
struct pipeline_stages {
  std::function<void*()> make;         ///< a new, default-constructed batch
  std::function<void(void*)> destroy;  ///< deletes a batch made by `make`
  std::function<bool(void*)> produce;  ///< serial, in order; false = no more input
  std::function<void(void*)> work;     ///< concurrent, on different batches
  std::function<bool(void*)> consume;  ///< serial, in production order; false stops early
};
void run_ordered_pipeline(unsigned threads, const pipeline_stages& stages);

/// Runs produce -> work -> consume over batches of type Batch (default-constructible).
///  - produce(Batch&) -> bool: fills the batch (called serially, in order); false = no more
///    input (the batch is discarded).
///  - work(Batch&): processes a batch; called concurrently on different batches.
///  - consume(Batch&) -> bool: called serially in production order; false stops the pipeline
///    early (e.g. the output pipe closed): later batches are neither processed nor consumed.
template <class Batch, class Produce, class Work, class Consume>
void run_ordered_pipeline(unsigned threads, Produce&& produce, Work&& work, Consume&& consume) {
  const auto batch = [](void* b) -> Batch& { return *static_cast<Batch*>(b); };
  pipeline_stages stages;
  stages.make = [] { return static_cast<void*>(new Batch()); };
  stages.destroy = [](void* b) { delete static_cast<Batch*>(b); };
  stages.produce = [&](void* b) { return produce(batch(b)); };
  stages.work = [&](void* b) { work(batch(b)); };
  stages.consume = [&](void* b) { return consume(batch(b)); };
  run_ordered_pipeline(threads, stages);
}

}  // namespace simdup
