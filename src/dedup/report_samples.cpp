#include "dedup/report_samples.hpp"

#include <simdup/normalize.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace simdup {
namespace {

// Of a long HTML document the report reads this much markup: its text starts the sample, and
// a 50 MB record is not converted whole for 4,000 bytes of it.
constexpr std::size_t kHtmlPrefixBytes = std::size_t{1} << 20;

// An HTML document's text as the job's HTML step reads it (tags, comments, scripts and styles
// dropped, entities decoded, blocks separated by spaces), without the other normalisation steps
// (case, punctuation), so the report shows what was compared in a readable form.
std::string html_text(std::string_view html) {
  static const std::optional<normalizer> reader = [] {
    normalize_options o{};
    o.html = true;
    o.nfkc = o.casefold = o.t2s = o.strip_punctuation = o.strip_digits = false;
    o.collapse_whitespace = true;
    auto made = normalizer::create(o);  // no t2s: no dictionaries to load
    return made ? std::optional<normalizer>(std::move(made).value()) : std::nullopt;
  }();
  if (!reader) return std::string(html);
  std::size_t cut = std::min(html.size(), kHtmlPrefixBytes);
  while (cut < html.size() && cut > 0 && (static_cast<unsigned char>(html[cut]) & 0xC0) == 0x80)
    --cut;
  return reader->normalize(html.substr(0, cut));
}

}  // namespace

std::string sample_text(std::string_view text) {
  constexpr std::size_t kSampleBytes = 4000;
  if (text.size() <= kSampleBytes) return std::string(text);
  std::size_t cut = kSampleBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + " …";
}

std::string sample_text(const document& doc, bool all_html) {
  if (!all_html && !document_is_html(doc)) return sample_text(doc.text);
  std::string text = sample_text(html_text(doc.text));
  // The markup read was cut: so is its text, however short.
  if (doc.text.size() > kHtmlPrefixBytes && !text.ends_with(" …")) text += " …";
  return text;
}

}  // namespace simdup

namespace simdup::detail {

sample_collector::sample_collector(std::vector<cluster> clusters, bool all_html)
    : clusters_(std::move(clusters)), all_html_(all_html) {
  for (const auto& c : clusters_) {
    wanted_[c.representative];
    for (uint32_t m : c.members) wanted_[m];
  }
}

std::optional<uint32_t> sample_collector::last() const {
  std::optional<uint32_t> last;
  for (const auto& [ordinal, text] : wanted_) last = std::max(last.value_or(0), ordinal);
  return last;
}

void sample_collector::take(uint32_t ordinal, const document& doc) {
  auto it = wanted_.find(ordinal);
  if (it == wanted_.end()) return;
  it->second.first = doc.id;
  it->second.second = sample_text(doc, all_html_);
}

std::vector<cluster_sample> sample_collector::build(
    const std::function<dedup_decision(uint32_t)>& decision_of) const {
  std::vector<cluster_sample> out;
  for (const auto& c : clusters_) {
    cluster_sample s;
    s.cluster = c.representative;
    s.size = c.size;
    const auto& rep = wanted_.at(c.representative);
    s.representative = {rep.first, rep.second, dedup_layer::none, -1, NAN};
    for (uint32_t m : c.members) {
      const auto& doc = wanted_.at(m);
      const dedup_decision d = decision_of(m);
      s.members.push_back(
          {doc.first, doc.second, d.layer, d.distance, static_cast<double>(d.jaccard)});
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<sample_collector::cluster> batch_sample_clusters(
    const std::vector<dedup_decision>& decisions, dedup_summary& summary, std::size_t top,
    std::size_t members) {
  const auto n = static_cast<uint32_t>(decisions.size());
  std::vector<uint32_t> sizes(n, 0);
  // Documents dropped against an earlier run belong to clusters of that run: not counted here.
  for (uint32_t i = 0; i < n; ++i) {
    if (decisions[i].against == 0) ++sizes[decisions[i].representative];
  }
  std::vector<uint32_t> reps;
  for (uint32_t i = 0; i < n; ++i) {
    if (sizes[i] == 0) continue;
    ++summary.cluster_sizes[sizes[i]];
    if (sizes[i] > 1) reps.push_back(i);
  }
  top = std::min(top, reps.size());
  std::partial_sort(
      reps.begin(), reps.begin() + static_cast<std::ptrdiff_t>(top), reps.end(),
      [&](uint32_t a, uint32_t b) { return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : a < b; });
  reps.resize(top);
  std::unordered_map<uint32_t, std::vector<uint32_t>> shown;
  for (uint32_t r : reps) shown[r];
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = decisions[i].representative;
    if (r == i || decisions[i].against != 0) continue;
    auto it = shown.find(r);
    if (it != shown.end() && it->second.size() < 64) it->second.push_back(i);
  }
  std::vector<sample_collector::cluster> out;
  for (uint32_t r : reps) {
    auto& m = shown[r];
    // Near duplicates with the largest distance show the most interesting differences.
    std::stable_sort(m.begin(), m.end(), [&](uint32_t a, uint32_t b) {
      const bool na = decisions[a].layer == dedup_layer::near;
      const bool nb = decisions[b].layer == dedup_layer::near;
      if (na != nb) return na;
      return decisions[a].distance > decisions[b].distance;
    });
    m.resize(std::min(m.size(), members));
    out.push_back({r, sizes[r], m});
  }
  return out;
}

void stream_clusters::add_duplicate(uint32_t ordinal, const dedup_decision& decision) {
  cluster& c = clusters_[decision.representative];
  ++c.size;
  if (c.members.size() < members_) c.members.emplace_back(ordinal, decision);
}

std::vector<sample_collector::cluster> stream_clusters::sample_clusters(dedup_summary& summary,
                                                                        std::size_t top) const {
  uint64_t with_duplicates = 0;
  std::vector<uint32_t> reps;
  for (const auto& [rep, c] : clusters_) {
    ++summary.cluster_sizes[c.size];
    ++with_duplicates;
    reps.push_back(rep);
  }
  if (summary.kept > with_duplicates) summary.cluster_sizes[1] += summary.kept - with_duplicates;
  top = std::min(top, reps.size());
  std::partial_sort(reps.begin(), reps.begin() + static_cast<std::ptrdiff_t>(top), reps.end(),
                    [&](uint32_t a, uint32_t b) {
                      const uint64_t sa = clusters_.at(a).size, sb = clusters_.at(b).size;
                      return sa != sb ? sa > sb : a < b;
                    });
  reps.resize(top);
  std::vector<sample_collector::cluster> out;
  for (uint32_t r : reps) {
    const cluster& c = clusters_.at(r);
    std::vector<uint32_t> shown;
    for (const auto& [m, d] : c.members) shown.push_back(m);
    out.push_back({r, c.size, shown});
  }
  return out;
}

std::unordered_map<uint32_t, dedup_decision> stream_clusters::member_decisions() const {
  std::unordered_map<uint32_t, dedup_decision> out;
  for (const auto& [rep, c] : clusters_) {
    for (const auto& [m, d] : c.members) out[m] = d;
  }
  return out;
}

}  // namespace simdup::detail
