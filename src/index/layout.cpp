// Index layouts: validation, parsing and the table permutations they define.
#include <simdup/plan.hpp>

#include <algorithm>
#include <charconv>
#include <functional>
#include <numeric>
#include <string>

#include "index/tables.hpp"

namespace simdup {
namespace {

/// C(n, r), saturating at max_index_tables + 1 (enough to reject a layout).
std::size_t binomial_capped(int n, int r) {
  if (r < 0 || r > n) return 0;
  r = std::min(r, n - r);
  // c runs through C(n-r+i, i), increasing in i: once past the cap it stays past it.
  std::size_t c = 1;
  for (int i = 1; i <= r; ++i) {
    c = c * static_cast<std::size_t>(n - r + i) / static_cast<std::size_t>(i);
    if (c > max_index_tables) return max_index_tables + 1;
  }
  return c;
}

/// All r-subsets of {0..n-1} in lexicographic order, each as a bitmask over blocks.
std::vector<std::vector<int>> combinations(int n, int r) {
  std::vector<std::vector<int>> out;
  std::vector<int> c(static_cast<std::size_t>(r));
  std::iota(c.begin(), c.end(), 0);
  while (true) {
    out.push_back(c);
    int i = r - 1;
    while (i >= 0 && c[static_cast<std::size_t>(i)] == n - r + i) --i;
    if (i < 0) break;
    ++c[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < r; ++j)
      c[static_cast<std::size_t>(j)] = c[static_cast<std::size_t>(j - 1)] + 1;
  }
  return out;
}

/// A run of bits counted from the most significant bit: positions [start, start + width).
struct bit_range {
  int start;
  int width;
};

using block = std::vector<bit_range>;  // a block may span gaps (level 2)

/// Splits the concatenation of `ranges` (in order) into blocks of the given widths.
std::vector<block> split_ranges(const std::vector<bit_range>& ranges,
                                const std::vector<int>& widths) {
  std::vector<block> blocks;
  std::size_t ri = 0;
  int used = 0;  // bits of ranges[ri] already taken
  for (int w : widths) {
    block b;
    while (w > 0) {
      const bit_range& r = ranges[ri];
      const int take = std::min(w, r.width - used);
      b.push_back({r.start + used, take});
      used += take;
      w -= take;
      if (used == r.width) {
        ++ri;
        used = 0;
      }
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

uint64_t low_mask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

detail::table_perm make_perm(const std::vector<bit_range>& prefix,
                             const std::vector<bit_range>& rest) {
  detail::table_perm t;
  int cursor = 0;
  auto place = [&](const bit_range& r) {
    const int src_shift = 64 - r.start - r.width;
    const int dst_shift = 64 - cursor - r.width;
    cursor += r.width;
    if (!t.moves.empty()) {
      detail::bit_move& last = t.moves.back();
      // Contiguous in both the fingerprint and the key: extend the previous move.
      if (last.src_shift == src_shift + r.width && last.dst_shift == dst_shift + r.width) {
        last.mask = (last.mask << r.width) | low_mask(r.width);
        last.src_shift = src_shift;
        last.dst_shift = dst_shift;
        return;
      }
    }
    t.moves.push_back({src_shift, dst_shift, low_mask(r.width)});
  };
  for (const bit_range& r : prefix) {
    place(r);
    t.prefix_bits += r.width;
    t.prefix_mask |= low_mask(r.width) << (64 - r.start - r.width);
  }
  for (const bit_range& r : rest) place(r);
  return t;
}

int largest_sum(std::vector<int> widths, int count) {
  std::sort(widths.begin(), widths.end(), std::greater<>());
  return std::accumulate(widths.begin(), widths.begin() + count, 0);
}

}  // namespace

namespace detail {

std::vector<int> even_widths(int bits, int blocks) {
  std::vector<int> w(static_cast<std::size_t>(blocks), bits / blocks);
  for (int i = 0; i < bits % blocks; ++i) ++w[static_cast<std::size_t>(i)];
  return w;
}

std::vector<table_perm> build_tables(const index_layout& layout) {
  const int m1 = static_cast<int>(layout.widths.size());
  std::vector<bit_range> level1;
  int start = 0;
  for (int w : layout.widths) {
    level1.push_back({start, w});
    start += w;
  }
  std::vector<table_perm> tables;
  for (const auto& c1 : combinations(m1, m1 - layout.k)) {
    std::vector<bit_range> prefix, rest;
    std::size_t ci = 0;
    for (int b = 0; b < m1; ++b) {
      if (ci < c1.size() && c1[ci] == b) {
        prefix.push_back(level1[static_cast<std::size_t>(b)]);
        ++ci;
      } else {
        rest.push_back(level1[static_cast<std::size_t>(b)]);
      }
    }
    if (layout.second_level_blocks == 0) {
      tables.push_back(make_perm(prefix, rest));
      continue;
    }
    int rest_bits = 0;
    for (const bit_range& r : rest) rest_bits += r.width;
    const int m2 = layout.second_level_blocks;
    const std::vector<block> level2 = split_ranges(rest, even_widths(rest_bits, m2));
    for (const auto& c2 : combinations(m2, m2 - layout.k)) {
      std::vector<bit_range> prefix2 = prefix, rest2;
      std::size_t cj = 0;
      for (int b = 0; b < m2; ++b) {
        const block& blk = level2[static_cast<std::size_t>(b)];
        std::vector<bit_range>& dst = (cj < c2.size() && c2[cj] == b) ? prefix2 : rest2;
        if (&dst == &prefix2) ++cj;
        dst.insert(dst.end(), blk.begin(), blk.end());
      }
      tables.push_back(make_perm(prefix2, rest2));
    }
  }
  return tables;
}

}  // namespace detail

index_layout index_layout::even(int k, int blocks) {
  index_layout l;
  l.k = k;
  if (blocks >= 1 && blocks <= 64) l.widths = detail::even_widths(64, blocks);
  return l;
}

index_layout index_layout::two_level(int k, int blocks1, int blocks2) {
  index_layout l = even(k, blocks1);
  l.second_level_blocks = blocks2;
  return l;
}

status validate_k(int k, std::string_view name) {
  if (k >= 0 && k <= max_index_k) return {};
  const std::string allowed = "0.." + std::to_string(max_index_k);
  return invalid_parameter({.name = std::string(name),
                            .value = std::to_string(k),
                            .allowed = allowed,
                            .reason = "must be in " + allowed + ", got " + std::to_string(k)});
}

status index_layout::validate() const {
  auto fail = [](std::string msg) { return make_error(errc::invalid_argument, std::move(msg)); };
  if (status s = validate_k(k); !s) return s;
  const int m1 = static_cast<int>(widths.size());
  if (m1 <= k)
    return fail("the layout needs more blocks than k (" + std::to_string(k) + "), got " +
                std::to_string(m1) + " blocks");
  int sum = 0;
  for (int w : widths) {
    if (w < 1 || w > 64) return fail("block widths must be between 1 and 64 bits");
    sum += w;
  }
  if (sum != 64) return fail("block widths must sum to 64 bits, got " + std::to_string(sum));
  if (second_level_blocks != 0) {
    if (second_level_blocks <= k || second_level_blocks > 64)
      return fail("second-level block count must be more than k and at most 64, got " +
                  std::to_string(second_level_blocks));
    const int rest = 64 - largest_sum(widths, m1 - k);
    if (rest < second_level_blocks)
      return fail("level 1 leaves " + std::to_string(rest) + " bits, too few for " +
                  std::to_string(second_level_blocks) + " second-level blocks");
  }
  if (table_count() > max_index_tables)
    return fail("the layout needs more than " + std::to_string(max_index_tables) + " tables");
  return {};
}

std::size_t index_layout::table_count() const {
  const int m1 = static_cast<int>(widths.size());
  std::size_t t = binomial_capped(m1, m1 - k);
  if (second_level_blocks > 0) {
    const std::size_t t2 = binomial_capped(second_level_blocks, second_level_blocks - k);
    t = (t > max_index_tables || t2 > max_index_tables) ? max_index_tables + 1
                                                        : std::min(t * t2, max_index_tables + 1);
  }
  return t;
}

std::string index_layout::describe() const {
  std::string s;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(widths[i]);
  }
  if (second_level_blocks) {
    s += '/';
    s += std::to_string(second_level_blocks);
  }
  return s;
}

result<index_layout> index_layout::parse(int k, std::string_view text) {
  auto bad = [&](const char* why) {
    return make_error(errc::invalid_argument,
                      "bad --blocks value '" + std::string(text) + "': " + why);
  };
  auto number = [](std::string_view t, int& v) {
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return ec == std::errc() && p == t.data() + t.size() && !t.empty();
  };
  index_layout l;
  l.k = k;
  std::string_view first = text, second;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    first = text.substr(0, slash);
    second = text.substr(slash + 1);
    if (!number(second, l.second_level_blocks)) return bad("expected a block count after '/'");
  }
  if (first.find(',') == std::string_view::npos) {
    int m = 0;
    if (!number(first, m) || m < 1 || m > 64) return bad("expected a block count 1..64");
    l.widths = detail::even_widths(64, m);
  } else {
    if (first.back() == ',') return bad("expected comma-separated bit widths");
    while (!first.empty()) {
      const auto comma = first.find(',');
      int w = 0;
      if (!number(first.substr(0, comma), w)) return bad("expected comma-separated bit widths");
      l.widths.push_back(w);
      first = comma == std::string_view::npos ? std::string_view{} : first.substr(comma + 1);
    }
  }
  if (status s = l.validate(); !s) return make_error(errc::invalid_argument, s.error().message);
  return l;
}

}  // namespace simdup
