#include "features/weighting.hpp"

#include "features/python_simhash.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

namespace simdup::detail {
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::size_t code_points(std::string_view s) noexcept {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

std::string lowercase(std::string_view s) {
  std::string out;
  python_lower(s, out);
  return out;
}

}  // namespace

result<std::shared_ptr<const idf_table>> idf_table::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "IDF file not found or unreadable: " + path);
  auto shared = std::make_shared<idf_table>();
  idf_table& table = *shared;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const std::size_t space = text.find_first_of(" \t");
    const auto bad = [&] {
      return make_error(errc::invalid_input, path + ":" + std::to_string(line_no) +
                                                 ": expected `word idf` with a finite number");
    };
    if (space == std::string_view::npos) return bad();
    const std::string_view word = text.substr(0, space);
    const std::string_view number = trim(text.substr(space));
    double idf = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), idf);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(idf))
      return bad();
    table.map_.insert_or_assign(std::string(word), idf);
  }
  if (in.bad()) return make_error(errc::io_error, "error reading IDF file: " + path);
  if (table.map_.empty())
    return make_error(errc::invalid_input, "IDF file has no entries: " + path);
  std::vector<double> values;
  values.reserve(table.map_.size());
  for (const auto& [word, idf] : table.map_) values.push_back(idf);
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  table.median_ = values[values.size() / 2];
  return std::shared_ptr<const idf_table>(std::move(shared));
}

result<std::shared_ptr<const stopword_set>> load_stopwords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "stop-word file not found or unreadable: " + path);
  auto shared = std::make_shared<stopword_set>();
  stopword_set& words = *shared;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view word = trim(line);
    if (!word.empty()) words.insert(lowercase(word));
  }
  if (in.bad()) return make_error(errc::io_error, "error reading stop-word file: " + path);
  return std::shared_ptr<const stopword_set>(std::move(shared));
}

result<feature_weigher> feature_weigher::create(const weighting_options& options,
                                                std::size_t min_token_length) {
  feature_weigher w;
  w.scheme_ = options.scheme;
  w.min_token_length_ = std::max<std::size_t>(min_token_length, 1);
  w.top_k_ = options.top_k;
  if (options.scheme == weighting_scheme::tfidf) {
    if (options.idf_path.empty())
      return make_error(errc::invalid_argument, "tfidf weighting needs an IDF file (idf_path)");
    auto table = idf_table::load(options.idf_path);
    if (!table) return table.error();
    w.unknown_idf_ = options.unknown_idf >= 0 ? options.unknown_idf : (*table)->median();
    w.idf_ = std::move(*table);
  }
  if (!options.stopwords_path.empty()) {
    auto stop = load_stopwords(options.stopwords_path);
    if (!stop) return stop.error();
    w.stop_ = std::move(*stop);
  }
  return w;
}

bool feature_weigher::plain_count() const noexcept {
  return scheme_ == weighting_scheme::count && top_k_ == 0;
}

bool feature_weigher::keep(std::string_view token) const {
  token = trim(token);
  if (token.empty() || (min_token_length_ > 1 && code_points(token) < min_token_length_))
    return false;
  if (stop_ && stop_->contains(lowercase(token))) return false;
  return true;
}

void feature_weigher::weigh(std::span<const std::string_view> tokens, bool filter,
                            std::vector<feature_view>& out) const {
  thread_local count_map counts;
  counts.clear();
  for (std::string_view t : tokens)
    if (!filter || keep(t)) counts.add(t);
  const auto& entries = counts.entries();
  double total = 0;
  for (const auto& e : entries) total += static_cast<double>(e.count);
  const std::size_t first = out.size();
  for (const auto& e : entries) {
    double weight = static_cast<double>(e.count);
    if (scheme_ == weighting_scheme::binary) weight = 1;
    // count * (idf / total), in jieba's order of operations, so weights match it to the last bit.
    if (scheme_ == weighting_scheme::tfidf) weight *= idf_->get(e.key, unknown_idf_) / total;
    out.push_back({e.key, weight});
  }
  // Stable: equal weights keep first-occurrence order, like Python's sorted().
  const auto heavier = [](const feature_view& a, const feature_view& b) {
    return a.weight > b.weight;
  };
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), heavier);
  if (top_k_ > 0 && out.size() - first > top_k_) out.resize(first + top_k_);
}

}  // namespace simdup::detail
