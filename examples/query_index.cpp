// An online index as a crawler would use one: fingerprint pages as they arrive, ask whether a
// lightly edited copy was seen already (check_insert), and query the index for near matches.
#include <simdup/simdup.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  auto fp = simdup::fingerprinter::create(simdup::fingerprint_options{});
  if (!fp) {
    std::fprintf(stderr, "query_index: %s\n", fp.error().message.c_str());
    return 1;
  }
  simdup::online_index_options options;
  options.layout.k = 3;          // near duplicates: at most 3 of 64 bits differ (inclusive)
  options.expected_size = 1000;  // sizes the index layout (the planner)
  auto index = simdup::online_index::create(options);
  if (!index) {
    std::fprintf(stderr, "query_index: %s\n", index.error().message.c_str());
    return 1;
  }

  const std::vector<std::string> pages = {
      "Heavy rain is expected across the north of the country on Friday, forecasters said, "
      "with local flooding likely in low-lying areas near rivers.",
      "The central bank left interest rates unchanged on Thursday and said inflation was "
      "falling more slowly than it had expected earlier in the year.",
      // A light edit of the first page: the same story with one word changed.
      "Heavy rain is expected across the north of the country on Friday, forecasters warned, "
      "with local flooding likely in low-lying areas near rivers.",
  };
  int64_t now = 1'700'000'000;
  for (std::size_t id = 0; id < pages.size(); ++id) {
    const simdup::fingerprint_result r = fp->fingerprint(pages[id]);
    const simdup::index_entry entry{.fingerprint = r.fingerprint, .id = id, .timestamp = now++};
    const std::vector<simdup::index_match> seen = index->check_insert(entry, {.k = -1, .now = now});
    if (seen.empty()) {
      std::printf("page %zu: new (indexed)\n", id);
    } else {
      std::printf("page %zu: near duplicate of page %llu (distance %d)\n", id,
                  static_cast<unsigned long long>(seen.front().id), seen.front().distance);
    }
  }

  // Another light edit, of the second page ("left" -> "kept"), found by a plain query.
  const simdup::fingerprint_result probe = fp->fingerprint(
      "The central bank kept interest rates unchanged on Thursday and said inflation was "
      "falling more slowly than it had expected earlier in the year.");
  for (const simdup::index_match& m : index->query(probe.fingerprint, {.k = 3, .now = now})) {
    std::printf("query: page %llu at distance %d\n", static_cast<unsigned long long>(m.id),
                m.distance);
  }
  std::printf("indexed %llu pages\n", static_cast<unsigned long long>(index->stats().size));
  return 0;
}
