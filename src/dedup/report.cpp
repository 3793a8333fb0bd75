// report.html: one self-contained page (inline CSS and SVG; no scripts, no network) with the
// numbers, a distance histogram, a cluster-size plot and the largest clusters side by side.
#include <simdup/dedup_report.hpp>
#include <simdup/utf8.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace simdup {
namespace {

bool is_ascii_word(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Tokens for the diff: ASCII word runs, whitespace runs, and single other code points (so
// Chinese text is compared character by character).
std::vector<std::string_view> tokenize(std::string_view text, std::size_t limit) {
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while (pos < text.size() && tokens.size() < limit) {
    const std::size_t start = pos;
    const auto c = static_cast<unsigned char>(text[pos]);
    if (is_ascii_word(c)) {
      while (pos < text.size() && is_ascii_word(static_cast<unsigned char>(text[pos]))) ++pos;
    } else if (is_space(c)) {
      while (pos < text.size() && is_space(static_cast<unsigned char>(text[pos]))) ++pos;
    } else {
      std::size_t invalid = 0;
      utf8::decode(text, pos, invalid);
    }
    tokens.push_back(text.substr(start, pos - start));
  }
  return tokens;
}

// Tokens compare without ASCII case, so a copy in capitals shows its real edits only.
bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i], y = b[i];
    if (x != y && (x | 0x20) != (y | 0x20)) return false;
    if (x != y && !(((x | 0x20) >= 'a') && ((x | 0x20) <= 'z'))) return false;
  }
  return true;
}

// Marks tokens outside a longest common subsequence (O(n*m) table; n, m <= max_tokens).
void mark_differences(const std::vector<std::string_view>& a,
                      const std::vector<std::string_view>& b, std::vector<bool>& in_a,
                      std::vector<bool>& in_b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<uint16_t> table((n + 1) * (m + 1), 0);
  const auto at = [&](std::size_t i, std::size_t j) -> uint16_t& { return table[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = same_token(a[i], b[j]) ? static_cast<uint16_t>(at(i + 1, j + 1) + 1)
                                        : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  in_a.assign(n, true);
  in_b.assign(m, true);
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (same_token(a[i], b[j])) {
      in_a[i++] = false;
      in_b[j++] = false;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
}

std::string render(std::string_view text, const std::vector<std::string_view>& tokens,
                   const std::vector<bool>& marked, const char* tag) {
  std::string out;
  bool open = false;
  std::size_t consumed = 0;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (marked[t] != open) {
      out += marked[t] ? std::string("<") + tag + ">" : std::string("</") + tag + ">";
      open = marked[t];
    }
    out += html_escape(tokens[t]);
    consumed += tokens[t].size();
  }
  if (open) out += std::string("</") + tag + ">";
  out += html_escape(text.substr(consumed));
  return out;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string number(uint64_t v) {
  return std::to_string(v);
}

// A bar chart as inline SVG: labels under the bars, values above them.
std::string bar_chart(const std::vector<std::pair<std::string, uint64_t>>& bars,
                      const std::string& title, const std::string& color, bool log_scale) {
  const int width = 560, height = 236, left = 40, bottom = 30, top = 40;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" role=\"img\" aria-label=\"" +
                    html_escape(title) + "\">";
  svg += "<text x=\"4\" y=\"16\" class=\"t\">" + html_escape(title) + "</text>";
  uint64_t max_value = 1;
  for (const auto& b : bars) max_value = std::max(max_value, b.second);
  const auto scale = [&](uint64_t v) {
    if (v == 0) return 0.0;
    return log_scale ? std::log10(static_cast<double>(v) + 1) /
                           std::log10(static_cast<double>(max_value) + 1)
                     : static_cast<double>(v) / static_cast<double>(max_value);
  };
  const double plot_h = height - bottom - top;
  const double slot = bars.empty() ? 0 : static_cast<double>(width - left - 8) / bars.size();
  svg += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + std::to_string(height - bottom) +
         "\" x2=\"" + std::to_string(width - 4) + "\" y2=\"" + std::to_string(height - bottom) +
         "\" stroke=\"#888\"/>";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double h = scale(bars[i].second) * plot_h;
    const double x = left + slot * static_cast<double>(i) + slot * 0.1;
    const double y = height - bottom - h;
    svg += "<rect x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) + "\" width=\"" +
           fmt("%.1f", slot * 0.8) + "\" height=\"" + fmt("%.1f", h) + "\" fill=\"" + color +
           "\"><title>" + html_escape(bars[i].first) + ": " + number(bars[i].second) +
           "</title></rect>";
    if (bars[i].second > 0) {
      svg += "<text x=\"" + fmt("%.1f", x + slot * 0.4) + "\" y=\"" + fmt("%.1f", y - 3) +
             "\" class=\"v\">" + number(bars[i].second) + "</text>";
    }
    svg += "<text x=\"" + fmt("%.1f", x + slot * 0.4) + "\" y=\"" +
           std::to_string(height - bottom + 14) + "\" class=\"l\">" + html_escape(bars[i].first) +
           "</text>";
  }
  if (bars.empty()) svg += "<text x=\"200\" y=\"110\" class=\"t\">no data</text>";
  svg += "</svg>";
  return svg;
}

std::string card(const std::string& label, const std::string& value, const std::string& note) {
  return "<div class=\"card\"><div class=\"n\">" + value + "</div><div class=\"k\">" +
         html_escape(label) + "</div><div class=\"s\">" + html_escape(note) + "</div></div>";
}

std::string percent(uint64_t part, uint64_t whole) {
  return whole ? fmt("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole))
               : "0%";
}

std::string member_caption(const sample_document& d) {
  std::string c = html_escape(d.id) + " &middot; layer <b>" + layer_name(d.layer) + "</b>";
  if (d.distance >= 0) c += " &middot; distance " + std::to_string(d.distance);
  if (!std::isnan(d.jaccard)) c += " &middot; Jaccard " + fmt("%.3f", d.jaccard);
  return c;
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fafafa}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.params{color:#555;font-size:13px}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;min-width:120px}
.card .n{font-size:22px;font-weight:600}.card .k{color:#444}.card .s{color:#777;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts svg{background:#fff;border:1px solid #ddd;border-radius:6px}
svg .t{font-size:13px;font-weight:600;fill:#333}svg .v{font-size:10px;text-anchor:middle;fill:#333}
svg .l{font-size:10px;text-anchor:middle;fill:#555}
.cluster{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;margin:12px 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:10px;margin:8px 0}
.doc{border:1px solid #e4e4e4;border-radius:4px;padding:6px 8px;white-space:pre-wrap;word-break:break-word;
max-height:260px;overflow:auto;font-size:12.5px;background:#fcfcfc}
.cap{font-size:12px;color:#555;margin-bottom:4px}del{background:#fdd;text-decoration:none}
ins{background:#cfc;text-decoration:none}table.t{border-collapse:collapse}
table.t td,table.t th{border:1px solid #ddd;padding:3px 8px;text-align:right}
)";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t pos = 0, invalid = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (static_cast<unsigned char>(c) < 0x80) {
      ++pos;
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        default:
          // Control characters other than tab/newline are not allowed in HTML text.
          if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
            out += "\xEF\xBF\xBD";
          } else {
            out.push_back(c);
          }
      }
    } else {
      utf8::append(out, utf8::decode(text, pos, invalid));
    }
  }
  return out;
}

std::pair<std::string, std::string> diff_html(std::string_view a, std::string_view b,
                                              std::size_t max_tokens) {
  const auto ta = tokenize(a, max_tokens), tb = tokenize(b, max_tokens);
  std::vector<bool> ma, mb;
  mark_differences(ta, tb, ma, mb);
  return {render(a, ta, ma, "del"), render(b, tb, mb, "ins")};
}

std::string report_html(const dedup_summary& s) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += "<title>simdup dedup report</title><style>";
  h += kStyle;
  h += "</style></head><body>\n<h1>simdup dedup report</h1>\n<div class=\"params\">";
  std::string inputs;
  for (const auto& in : s.inputs) inputs += (inputs.empty() ? "" : ", ") + in;
  h += "inputs: " + html_escape(inputs) + " &middot; mode <b>" + html_escape(s.mode) +
       "</b> &middot; k = " + std::to_string(s.k) + " &middot; keep " + html_escape(s.keep) +
       " &middot; clusters: " + html_escape(s.linking) + " &middot; layers: ";
  for (std::size_t i = 0; i < s.layers.size(); ++i) h += (i ? ", " : "") + html_escape(s.layers[i]);
  h += " &middot; verify: " +
       (s.verify_threshold > 0 ? "Jaccard &ge; " + fmt("%g", s.verify_threshold) : "off");
  h += "</div>\n<div class=\"cards\">";
  h += card(
      "documents read", number(s.read),
      fmt("%.1f MB", static_cast<double>(s.bytes) / 1e6) + " in " + fmt("%.2f s", s.seconds_total));
  h += card("kept", number(s.kept), percent(s.kept, s.read));
  std::string by_layer;
  for (dedup_layer l :
       {dedup_layer::url, dedup_layer::title, dedup_layer::exact, dedup_layer::near}) {
    by_layer += std::string(by_layer.empty() ? "" : ", ") + layer_name(l) + " " +
                number(s.by_layer[static_cast<std::size_t>(l)]);
  }
  h += card("duplicates", number(s.duplicates), by_layer);
  std::string reasons;
  for (const auto& [r, n] : s.skipped_reasons)
    reasons += (reasons.empty() ? "" : ", ") + r + " " + number(n);
  if (s.skipped_inputs > 0) reasons += "; " + number(s.skipped_inputs) + " inputs skipped";
  h += card("skipped records", number(s.skipped), reasons.empty() ? "no bad records" : reasons);
  h += card("short documents", number(s.short_documents), "exact layers only");
  uint64_t clusters = 0, largest = 0;
  for (const auto& [size, n] : s.cluster_sizes) {
    if (size < 2) continue;
    clusters += n;
    largest = std::max(largest, size);
  }
  h += card("clusters with duplicates", number(clusters), "largest " + number(largest));
  if (s.verify_threshold > 0) {
    h += card("near pairs verified", number(s.candidate_pairs),
              number(s.rejected_pairs) + " rejected");
  }
  h += "</div>\n<h2>Distances and cluster sizes</h2>\n<div class=\"charts\">";

  std::vector<std::pair<std::string, uint64_t>> dist;
  int max_d = s.k;
  for (int d = 0; d <= 64; ++d) {
    if (s.distance_histogram[static_cast<std::size_t>(d)] != 0) max_d = std::max(max_d, d);
  }
  for (int d = 0; d <= max_d; ++d) {
    dist.emplace_back(std::to_string(d), s.distance_histogram[static_cast<std::size_t>(d)]);
  }
  h += bar_chart(dist, "Hamming distance of duplicates to their representative", "#4a7bd0", false);

  // Cluster sizes in powers-of-two buckets on a log scale: a few giant clusters and many pairs
  // are both visible.
  std::vector<std::pair<std::string, uint64_t>> sizes;
  for (uint64_t lo = 2; lo <= std::max<uint64_t>(largest, 2); lo *= 2) {
    const uint64_t hi = lo * 2 - 1;
    uint64_t n = 0;
    for (const auto& [size, count] : s.cluster_sizes) {
      if (size >= lo && size <= hi) n += count;
    }
    sizes.emplace_back(lo == hi ? number(lo) : number(lo) + "-" + number(hi), n);
  }
  h += bar_chart(sizes, "Clusters by size (documents per cluster, log scale)", "#d0884a", true);
  h += "</div>\n<h2>Largest clusters</h2>\n";
  if (!s.samples_note.empty()) h += "<p class=\"params\">" + html_escape(s.samples_note) + "</p>";
  for (const auto& c : s.samples) {
    h += "<div class=\"cluster\"><b>cluster " + number(c.cluster) + "</b> &middot; " +
         number(c.size) + " documents &middot; kept: " + html_escape(c.representative.id);
    for (const auto& m : c.members) {
      const auto [left, right] = diff_html(c.representative.text, m.text);
      h += "<div class=\"pair\"><div><div class=\"cap\">kept " + html_escape(c.representative.id) +
           "</div><div class=\"doc\">" + left + "</div></div><div><div class=\"cap\">" +
           member_caption(m) + "</div><div class=\"doc\">" + right + "</div></div></div>";
    }
    h += "</div>\n";
  }
  h += "<h2>Timings</h2><table class=\"t\"><tr><th>phase</th><th>seconds</th></tr>";
  for (const auto& [name, sec] : s.seconds_by_phase) {
    h += "<tr><td>" + html_escape(name) + "</td><td>" + fmt("%.3f", sec) + "</td></tr>";
  }
  h += "<tr><td>total</td><td>" + fmt("%.3f", s.seconds_total) + "</td></tr></table>\n";
  h +=
      "<p class=\"params\">" +
      fmt("%.1f MB/s",
          s.seconds_total > 0 ? static_cast<double>(s.bytes) / 1e6 / s.seconds_total : 0.0) +
      " &middot; " + number(s.threads) + " threads &middot; engine memory " +
      fmt("%.1f bytes/document",
          s.read ? static_cast<double>(s.engine_memory_bytes) / static_cast<double>(s.read) : 0.0) +
      " &middot; peak RSS " + fmt("%.1f MB", static_cast<double>(s.peak_rss_bytes) / 1e6) +
      "</p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace simdup
