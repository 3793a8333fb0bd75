// simdup.dask's pair steps: SimHash candidates within groups of fingerprints that share a
// table's bits (all_pairs), MinHash candidates within one band's buckets (minhash_pairs), and the
// verification of sketch pairs (Jaccard, and the bounds that rule pairs out before any array is
// sent). Python moves the arrays between workers.
#include "bindings.hpp"
#include "dask_arrays.hpp"

#include <simdup/all_pairs.hpp>
#include <simdup/minhash.hpp>
#include <simdup/plan.hpp>
#include <simdup/simhash.hpp>
#include <simdup/verify.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <optional>

namespace simdup::python {
namespace {

// The blocks all_pairs uses inside a group whose members share the bits of one table's
// contiguous mask, there rotated to the lowest bits (rotation keeps distances): one block more
// than the planner's count for `n` fingerprints (the planner counts on 64 informative bits; one
// more was the fastest, on uniform and on biased fingerprints alike: docs/distributed.md), laid
// over the other bits, the last block also holding the shared ones. all_pairs' own plan would cut
// the 64 bits as the table layout does, and its table on the shared block would compare every
// pair of the group. nullopt: plan per group.
std::optional<index_layout> group_layout(uint64_t mask, uint64_t n, int k) {
  const int shared = std::popcount(mask);
  const uint64_t run = mask >> std::countr_zero(mask);
  if (mask == 0 || (run & (run + 1)) != 0) return std::nullopt;  // not one contiguous run
  auto plan = make_plan({.n = n, .k = k, .purpose = plan_purpose::batch});
  if (!plan) return std::nullopt;
  index_layout layout = plan->layout;
  const int blocks = static_cast<int>(layout.widths.size()) + 1;
  layout.widths.resize(blocks);
  const int free_bits = 64 - shared;
  if (free_bits < blocks) return std::nullopt;
  for (int i = 0; i < blocks; ++i) layout.widths[i] = free_bits / blocks + (i < free_bits % blocks);
  layout.widths.back() += shared;
  if (!layout.validate()) return std::nullopt;
  return layout;
}

// Pairs within k inside each group [starts[g], starts[g+1]) of `fingerprints` (positions),
// whose members share the bits of masks[tables[g]]; each pair only from the first table whose
// bits it shares (tables in order), so it is found once across the groups of all tables. The
// blocks are planned once per table (group_layout, for the table's mean group size).
py::tuple group_pairs(const u64_array& fingerprints, const u64_array& starts,
                      const u64_array& group_tables, const u64_array& table_masks, int k) {
  const auto fps = view(fingerprints);
  const auto bounds = view(starts);
  const auto tables = view(group_tables);
  const auto masks = view(table_masks);
  if (bounds.empty() || tables.size() + 1 != bounds.size()) {
    throw py::value_error("tables must have one entry per group (starts has one more)");
  }
  for (std::size_t g = 0; g < tables.size(); ++g) {
    if (tables[g] >= masks.size()) throw py::value_error("tables must index the masks");
    if (bounds[g] > bounds[g + 1] || bounds[g + 1] > fps.size()) {
      throw py::value_error("group bounds must increase within the fingerprints");
    }
  }
  std::vector<uint64_t> a, b;
  status failed;
  {
    py::gil_scoped_release nogil;
    std::vector<uint64_t> rows(masks.size()), groups(masks.size());
    for (std::size_t g = 0; g < tables.size(); ++g) {
      rows[tables[g]] += bounds[g + 1] - bounds[g];
      ++groups[tables[g]];
    }
    std::vector<std::optional<index_layout>> layouts(masks.size());
    for (std::size_t t = 0; t < masks.size(); ++t) {
      if (groups[t] > 0) layouts[t] = group_layout(masks[t], rows[t] / groups[t], k);
    }
    std::vector<uint64_t> rotated;
    for (std::size_t g = 0; g < tables.size() && failed; ++g) {
      const uint64_t first = bounds[g], n = bounds[g + 1] - first;
      if (n < 2) continue;
      const std::size_t t = tables[g];
      all_pairs_options ap;
      ap.layout.k = k;
      ap.threads = 1;  // one task per core: Dask runs the groups in parallel
      std::span<const uint64_t> group = fps.subspan(first, n);
      if (layouts[t]) {
        ap.layout = *layouts[t];
        const int shift = std::countr_zero(masks[t]);
        rotated.resize(n);
        for (uint64_t i = 0; i < n; ++i) rotated[i] = std::rotr(group[i], shift);
        group = rotated;
      }
      auto run = all_pairs(group, ap, [&](std::span<const index_pair> ps) {
        for (const index_pair& p : ps) {
          const uint64_t x = fps[first + p.a] ^ fps[first + p.b];
          if (std::any_of(masks.begin(), masks.begin() + static_cast<std::ptrdiff_t>(t),
                          [x](uint64_t m) { return (x & m) == 0; })) {
            continue;  // an earlier table's group has it
          }
          a.push_back(first + p.a);
          b.push_back(first + p.b);
        }
        return true;
      });
      if (!run) failed = std::move(run).error();
    }
  }
  check(failed);
  return py::make_tuple(to_array(a), to_array(b));
}

// MinHash candidates of one band: `keys` (0: none) of documents in keep-policy order, each
// bucket capped as minhash_pairs caps it; pairs within k are left to SimHash.
py::tuple bucket_pairs(const u64_array& keys, const u64_array& fingerprints, int k,
                       std::size_t max_bucket) {
  const auto ks = view(keys);
  const auto fps = view(fingerprints);
  if (ks.size() != fps.size()) throw py::value_error("keys and fingerprints differ in length");
  std::vector<index_pair> pairs;
  {
    py::gil_scoped_release nogil;
    minhash_options mo;
    mo.bands = 1;
    mo.max_bucket = max_bucket;
    minhash_pairs(
        ks, ks.size(), mo,
        [&](uint32_t x, uint32_t y) { return hamming_distance(fps[x], fps[y]) <= k; }, pairs);
  }
  std::vector<uint64_t> a(pairs.size()), b(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    a[i] = pairs[i].a;
    b[i] = pairs[i].b;
  }
  return py::make_tuple(to_array(a), to_array(b));
}

// Jaccard of pair i: sketch rows_a[i] of store A against sketch rows_b[i] of store B (each store a
// ragged array: offsets with one entry per sketch plus one, into hashes), as the batch engine's
// verification computes it. Pairs carry row numbers only, so no sketch is copied per pair.
py::array_t<double> jaccards(const u64_array& offsets_a, const u32_array& hashes_a,
                             const u64_array& rows_a, const u64_array& offsets_b,
                             const u32_array& hashes_b, const u64_array& rows_b, double threshold,
                             std::size_t max_hashes) {
  const auto oa = view(offsets_a), ob = view(offsets_b);
  const auto ha = view(hashes_a), hb = view(hashes_b);
  const auto ra = view(rows_a), rb = view(rows_b);
  if (oa.empty() || ob.empty() || oa.back() > ha.size() || ob.back() > hb.size()) {
    throw py::value_error("offsets must have one entry per sketch plus one, within the hashes");
  }
  if (ra.size() != rb.size()) throw py::value_error("rows_a and rows_b differ in length");
  const auto within = [](std::span<const uint64_t> rows, std::span<const uint64_t> offsets) {
    return std::all_of(rows.begin(), rows.end(), [&](uint64_t r) {
      return r + 1 < offsets.size() && offsets[r] <= offsets[r + 1];
    });
  };
  if (!within(ra, oa) || !within(rb, ob)) {
    throw py::value_error("rows must name sketches of their store");
  }
  py::array_t<double> out(static_cast<py::ssize_t>(ra.size()));
  double* o = out.mutable_data();
  py::gil_scoped_release nogil;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    const auto a = ha.subspan(oa[ra[i]], oa[ra[i] + 1] - oa[ra[i]]);
    const auto b = hb.subspan(ob[rb[i]], ob[rb[i] + 1] - ob[rb[i]]);
    o[i] = max_hashes > 0 ? sketch_jaccard(a, b, max_hashes) : jaccard_at_least(a, b, threshold);
  }
  return out;
}

// Pairs whose shingle array sizes alone rule the threshold out (jaccard_at_least's own first
// test, so verification would reject them): such a pair needs no array sent anywhere.
py::array_t<bool> size_rejects(const u32_array& counts_a, const u32_array& counts_b,
                               double threshold) {
  const auto na = view(counts_a), nb = view(counts_b);
  if (na.size() != nb.size()) throw py::value_error("counts_a and counts_b differ in length");
  py::array_t<bool> out(static_cast<py::ssize_t>(na.size()));
  bool* o = out.mutable_data();
  for (std::size_t i = 0; i < na.size(); ++i) {
    o[i] = na[i] + nb[i] == 0 || jaccard_size_bound(na[i], nb[i], threshold).has_value();
  }
  return out;
}

// Rows `rows` of a ragged uint32 column (offsets, n + 1 of them, into flat): new offsets and the
// rows' values, one copy per row. numpy would build an index as long as the values (8 bytes for
// each 4-byte hash) and gather through it: the shingle arrays of a partition's documents in
// components are hundreds of MB.
py::tuple ragged_take(const u64_array& offsets, const u32_array& flat, const i64_array& rows) {
  const auto off = view(offsets);
  const auto h = view(flat);
  const auto r = view(rows);
  const auto n = static_cast<int64_t>(off.size()) - 1;
  if (std::any_of(r.begin(), r.end(), [&](int64_t row) {
        return row < 0 || row >= n || off[row] > off[row + 1] || off[row + 1] > h.size();
      })) {
    throw py::value_error("rows must name rows of the offsets, within the values");
  }
  py::array_t<uint64_t> out_off(static_cast<py::ssize_t>(r.size() + 1));
  uint64_t* o = out_off.mutable_data();
  o[0] = 0;
  for (std::size_t i = 0; i < r.size(); ++i) o[i + 1] = o[i] + (off[r[i] + 1] - off[r[i]]);
  py::array_t<uint32_t> out(static_cast<py::ssize_t>(o[r.size()]));
  uint32_t* v = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::copy(h.begin() + static_cast<std::ptrdiff_t>(off[r[i]]),
                h.begin() + static_cast<std::ptrdiff_t>(off[r[i] + 1]), v + o[i]);
    }
  }
  return py::make_tuple(std::move(out_off), std::move(out));
}

// Per top byte value, how many hashes of each sketch at `rows` have it (the counts the CLI's
// verification rules pairs out by, shingle_store::top_byte_counts), 4 bits each, saturated at 15
// ("15 or more"): 128 bytes per sketch, sent in place of the whole array (about 1,900 bytes for a
// 500-character text). Value v is in byte v / 2, the low half for even v.
constexpr std::size_t kTopBytes = 256;
constexpr std::size_t kPackedTops = kTopBytes / 2;
constexpr uint32_t kSaturated = 15;

py::array_t<uint8_t> top_bytes(const u64_array& offsets, const u32_array& hashes,
                               const u64_array& rows) {
  const auto off = view(offsets);
  const auto h = view(hashes);
  const auto r = view(rows);
  if (std::any_of(r.begin(), r.end(), [&](uint64_t row) {
        return row + 1 >= off.size() || off[row] > off[row + 1] || off[row + 1] > h.size();
      })) {
    throw py::value_error("rows must name sketches of the offsets, within the hashes");
  }
  py::array_t<uint8_t> out(
      {static_cast<py::ssize_t>(r.size()), static_cast<py::ssize_t>(kPackedTops)});
  uint8_t* o = out.mutable_data();
  py::gil_scoped_release nogil;
  std::array<uint32_t, kTopBytes> counts{};
  for (std::size_t i = 0; i < r.size(); ++i) {
    counts.fill(0);
    for (uint64_t j = off[r[i]]; j < off[r[i] + 1]; ++j) ++counts[h[j] >> 24];
    for (std::size_t v = 0; v < kPackedTops; ++v) {
      o[i * kPackedTops + v] = static_cast<uint8_t>(std::min(counts[2 * v], kSaturated) |
                                                    std::min(counts[2 * v + 1], kSaturated) << 4);
    }
  }
  return out;
}

// Pairs that the top-byte counts rule out, as the CLI's verification rules them out before
// reading the second array (jaccard_shared_bound of the sum of the smaller counts): pair i is
// packed counts rows_a[i] (`tops_a`, from top_bytes; counts_a hashes in all) against sketch
// rows_b[i] of this store. A saturated count bounds nothing, so the other side's is taken there.
py::array_t<bool> shared_rejects(const u8_array& tops_a, const u32_array& counts_a,
                                 const u64_array& rows_a, const u64_array& offsets_b,
                                 const u32_array& hashes_b, const u64_array& rows_b,
                                 double threshold) {
  const auto ta = view(tops_a);
  const auto na = view(counts_a);
  const auto ra = view(rows_a), ob = view(offsets_b), rb = view(rows_b);
  const auto hb = view(hashes_b);
  if (ta.size() != na.size() * kPackedTops) {
    throw py::value_error("tops_a must have 128 bytes (top_bytes) per count");
  }
  if (ra.size() != rb.size()) throw py::value_error("rows_a and rows_b differ in length");
  if (std::any_of(ra.begin(), ra.end(), [&](uint64_t row) { return row >= na.size(); }) ||
      std::any_of(rb.begin(), rb.end(), [&](uint64_t row) {
        return row + 1 >= ob.size() || ob[row] > ob[row + 1] || ob[row + 1] > hb.size();
      })) {
    throw py::value_error("rows must name summaries and sketches of their stores");
  }
  py::array_t<bool> out(static_cast<py::ssize_t>(ra.size()));
  bool* o = out.mutable_data();
  py::gil_scoped_release nogil;
  std::array<uint32_t, kTopBytes> counts_b{};
  const auto at_most = [](uint32_t a, uint32_t b) { return a == kSaturated ? b : std::min(a, b); };
  for (std::size_t i = 0; i < ra.size(); ++i) {
    counts_b.fill(0);
    for (uint64_t j = ob[rb[i]]; j < ob[rb[i] + 1]; ++j) ++counts_b[hb[j] >> 24];
    const uint8_t* top_a = ta.data() + ra[i] * kPackedTops;
    std::size_t most_shared = 0;
    for (std::size_t v = 0; v < kPackedTops; ++v) {
      most_shared += at_most(top_a[v] & 15u, counts_b[2 * v]) +
                     at_most(static_cast<uint32_t>(top_a[v] >> 4), counts_b[2 * v + 1]);
    }
    o[i] = jaccard_shared_bound(most_shared, na[ra[i]], ob[rb[i] + 1] - ob[rb[i]], threshold)
               .has_value();
  }
  return out;
}

}  // namespace

void bind_dask_pairs(py::module_& m) {
  m.def("dask_group_pairs", &group_pairs, py::arg("fingerprints"), py::arg("starts"),
        py::arg("tables"), py::arg("masks"), py::arg("k"));
  m.def("dask_bucket_pairs", &bucket_pairs, py::arg("keys"), py::arg("fingerprints"), py::arg("k"),
        py::arg("max_bucket"));
  m.def("dask_jaccards", &jaccards, py::arg("offsets_a"), py::arg("hashes_a"), py::arg("rows_a"),
        py::arg("offsets_b"), py::arg("hashes_b"), py::arg("rows_b"), py::arg("threshold"),
        py::arg("max_hashes"));
  m.def("dask_size_rejects", &size_rejects, py::arg("counts_a"), py::arg("counts_b"),
        py::arg("threshold"));
  m.def("dask_ragged_take", &ragged_take, py::arg("offsets"), py::arg("flat"), py::arg("rows"));
  m.def("dask_top_bytes", &top_bytes, py::arg("offsets"), py::arg("hashes"), py::arg("rows"));
  m.def("dask_shared_rejects", &shared_rejects, py::arg("tops_a"), py::arg("counts_a"),
        py::arg("rows_a"), py::arg("offsets_b"), py::arg("hashes_b"), py::arg("rows_b"),
        py::arg("threshold"));
  m.attr("MINHASH_MAX_BUCKET") = minhash_options{}.max_bucket;
}

}  // namespace simdup::python
