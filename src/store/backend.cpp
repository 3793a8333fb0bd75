// The blocking conveniences of the backend interface and the verification rule, shared by
// every store.
#include "store/backend.hpp"

#include <simdup/verify.hpp>

#include <condition_variable>
#include <mutex>
#include <optional>

namespace simdup::detail {

std::optional<double> sketch_similarity(const collection_config& config,
                                        std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.empty() || b.empty()) return std::nullopt;
  return sketch_jaccard(a, b, static_cast<std::size_t>(config.sketch));
}

status backend::wait_durable(uint64_t ticket) {
  if (ticket == 0) return {};
  struct waiter {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<status> result;
  } w;
  when_durable(ticket, [&w](status st) {
    std::lock_guard lock(w.mu);
    w.result = std::move(st);
    // Notified under the lock: the waiter may return (and `w` go) as soon as it sees result.
    w.cv.notify_one();
  });
  std::unique_lock lock(w.mu);
  w.cv.wait(lock, [&w] { return w.result.has_value(); });
  return std::move(*w.result);
}

status backend::apply(const collection_config& config, doc_op op, std::span<const doc_input> docs,
                      int64_t now, std::size_t max_matches, std::span<doc_outcome> out) {
  auto ticket = apply_pending(config, op, docs, now, max_matches, out);
  if (!ticket) return std::move(ticket).error();
  return wait_durable(*ticket);
}

result<bool> backend::remove(const collection_config& config, const std::string& id) {
  auto r = remove_pending(config, id);
  if (!r) return std::move(r).error();
  if (auto st = wait_durable(r->ticket); !st) return std::move(st).error();
  return r->removed;
}

}  // namespace simdup::detail
