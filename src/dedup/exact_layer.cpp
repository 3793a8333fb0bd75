#include <simdup/exact_layer.hpp>

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cctype>

namespace simdup {
namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
char upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// Percent escapes differ only in the case of their hex digits ("%2f" vs "%2F"): unify them.
void append_upper_escapes(std::string& out, std::string_view part) {
  for (std::size_t i = 0; i < part.size(); ++i) {
    out.push_back(part[i]);
    if (part[i] == '%' && i + 2 < part.size() && is_hex(part[i + 1]) && is_hex(part[i + 2])) {
      out.push_back(upper(part[i + 1]));
      out.push_back(upper(part[i + 2]));
      i += 2;
    }
  }
}

bool is_tracking_param(std::string_view param) {
  const std::string_view name = param.substr(0, param.find('='));
  std::string lowered(name);
  for (char& c : lowered) c = lower(c);
  return lowered.starts_with("utm_") || lowered == "fbclid" || lowered == "gclid" ||
         lowered == "mc_cid" || lowered == "mc_eid";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "scheme://" where scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986).
std::size_t scheme_end(std::string_view url) {
  const std::size_t pos = url.find("://");
  if (pos == std::string_view::npos || pos == 0) return 0;
  if (!std::isalpha(static_cast<unsigned char>(url[0]))) return 0;
  for (std::size_t i = 1; i < pos; ++i) {
    const char c = url[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return 0;
  }
  return pos + 3;
}

}  // namespace

std::string normalize_url(std::string_view url) {
  url = trim(url);
  const std::size_t after_scheme = scheme_end(url);
  std::string scheme;
  for (char c : url.substr(0, after_scheme)) scheme.push_back(lower(c));
  url.remove_prefix(after_scheme);
  // Web pages: http and https are one page, and the fragment is client-side (except "#!"
  // routes of script-driven sites). Other schemes (file://, ftp://) keep scheme and fragment,
  // which may name distinct parts of one file.
  const bool web = scheme.empty() || scheme == "http://" || scheme == "https://";
  std::string_view fragment;
  if (const std::size_t hash = url.find('#'); hash != std::string_view::npos) {
    if (!web || url.substr(hash).starts_with("#!")) fragment = url.substr(hash);
    url = url.substr(0, hash);
  }

  const std::size_t authority_end = std::min(url.find_first_of("/?"), url.size());
  std::string_view authority = url.substr(0, authority_end);
  std::string_view rest = url.substr(authority_end);
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  std::string host;
  host.reserve(authority.size());
  for (char c : authority) host.push_back(lower(c));
  if (host.ends_with(":80"))
    host.resize(host.size() - 3);
  else if (host.ends_with(":443"))
    host.resize(host.size() - 4);
  if (host.starts_with("www.")) host.erase(0, 4);

  const std::size_t query_pos = std::min(rest.find('?'), rest.size());
  std::string_view path = rest.substr(0, query_pos);
  std::string_view query =
      query_pos < rest.size() ? rest.substr(query_pos + 1) : std::string_view{};
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);

  std::vector<std::string_view> params;
  while (!query.empty()) {
    const std::size_t amp = std::min(query.find('&'), query.size());
    const std::string_view param = query.substr(0, amp);
    if (!param.empty() && !is_tracking_param(param)) params.push_back(param);
    query.remove_prefix(std::min(amp + 1, query.size()));
  }
  std::sort(params.begin(), params.end());

  std::string out = web ? std::move(host) : scheme + host;
  append_upper_escapes(out, path);
  for (std::size_t i = 0; i < params.size(); ++i) {
    out.push_back(i == 0 ? '?' : '&');
    append_upper_escapes(out, params[i]);
  }
  out.append(fragment);
  return out;
}

uint64_t exact_key(std::string_view text) noexcept {
  if (text.empty()) return 0;
  const uint64_t h = XXH3_64bits(text.data(), text.size());
  return h == 0 ? 1 : h;
}

uint64_t url_key(std::string_view url) {
  return exact_key(normalize_url(url));
}

std::optional<uint32_t> exact_table::find(uint64_t key) const noexcept {
  if (key == 0 || keys_.empty()) return std::nullopt;
  const std::size_t mask = keys_.size() - 1;
  for (std::size_t i = slot(key);; i = (i + 1) & mask) {
    if (keys_[i] == key) return values_[i];
    if (keys_[i] == 0) return std::nullopt;
  }
}

std::optional<uint32_t> exact_table::find_or_insert(uint64_t key, uint32_t ordinal) {
  if (key == 0) return std::nullopt;
  if ((size_ + 1) * 10 > keys_.size() * 7) grow();
  const std::size_t mask = keys_.size() - 1;
  for (std::size_t i = slot(key);; i = (i + 1) & mask) {
    if (keys_[i] == key) return values_[i];
    if (keys_[i] == 0) {
      keys_[i] = key;
      values_[i] = ordinal;
      ++size_;
      return std::nullopt;
    }
  }
}

void exact_table::grow() {
  const std::size_t capacity = keys_.empty() ? 1024 : keys_.size() * 2;
  std::vector<uint64_t> old_keys(capacity, 0);
  std::vector<uint32_t> old_values(capacity, 0);
  old_keys.swap(keys_);
  old_values.swap(values_);
  shift_ = 64 - std::countr_zero(capacity);
  const std::size_t mask = capacity - 1;
  for (std::size_t j = 0; j < old_keys.size(); ++j) {
    if (old_keys[j] == 0) continue;
    std::size_t i = slot(old_keys[j]);
    while (keys_[i] != 0) i = (i + 1) & mask;
    keys_[i] = old_keys[j];
    values_[i] = old_values[j];
  }
}

}  // namespace simdup
