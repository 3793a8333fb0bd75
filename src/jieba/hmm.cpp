#include "jieba/hmm.hpp"

namespace simdup::detail {

namespace {

// The states each state can follow (jieba's PrevStatus).
constexpr uint8_t prev_states[4][2] = {
    {hmm_model::E, hmm_model::S},  // B
    {hmm_model::M, hmm_model::B},  // M
    {hmm_model::B, hmm_model::M},  // E
    {hmm_model::S, hmm_model::E},  // S
};

// Python compares (probability, state letter) tuples: on equal probability the later letter
// wins. B < E < M < S alphabetically, which is not the index order.
constexpr uint8_t letter_rank[4] = {0, 2, 1, 3};

inline bool better(double p, uint8_t s, double best_p, uint8_t best_s) {
  return p > best_p || (p == best_p && letter_rank[s] > letter_rank[best_s]);
}

}  // namespace

void hmm_model::viterbi(std::span<const uint32_t> chars, std::vector<uint8_t>& states,
                        std::vector<uint8_t>& back) const {
  const std::size_t n = chars.size();
  states.resize(n);
  if (n == 0) return;
  back.resize(n * 4);
  std::array<double, 4> v{};
  const double* em = emissions(chars[0]);
  for (int y = 0; y < 4; ++y) v[y] = start[y] + em[y];
  for (std::size_t t = 1; t < n; ++t) {
    em = emissions(chars[t]);
    std::array<double, 4> next{};
    for (int y = 0; y < 4; ++y) {
      const uint8_t a = prev_states[y][0];
      const uint8_t b = prev_states[y][1];
      // Same association as Python: (V[t-1][y0] + trans[y0][y]) + em_p.
      const double pa = v[a] + trans[a][y] + em[y];
      const double pb = v[b] + trans[b][y] + em[y];
      const bool take_b = better(pb, b, pa, a);
      next[y] = take_b ? pb : pa;
      back[t * 4 + y] = take_b ? b : a;
    }
    v = next;
  }
  uint8_t s = better(v[S], S, v[E], E) ? S : E;
  for (std::size_t t = n; t-- > 0;) {
    states[t] = s;
    if (t > 0) s = back[t * 4 + s];
  }
}

}  // namespace simdup::detail
