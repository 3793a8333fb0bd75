#include "service/metrics.hpp"

#include <cstdio>

namespace simdup::detail {
namespace {

// Label values here are endpoint names, outcomes and collection names ([A-Za-z0-9_.-]), which
// need no escaping in the exposition format.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void metrics::observe_request(const std::string& endpoint, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{endpoint, status}];
  histogram& h = latency_[endpoint];
  std::size_t b = 0;
  while (b < bounds_.size() && seconds > bounds_[b]) ++b;
  if (b < bounds_.size()) ++h.buckets[b];
  ++h.count;
  h.sum += seconds;
}

void metrics::count_documents(const std::string& collection, const std::string& outcome,
                              uint64_t n) {
  if (n == 0) return;
  std::lock_guard lock(mu_);
  documents_[{collection, outcome}] += n;
}

std::string metrics::render(const std::map<std::string, collection_sample>& collections,
                            int event_loops) const {
  std::string out;
  std::lock_guard lock(mu_);
  out += "# HELP simdup_http_event_loops Event-loop threads serving HTTP (--threads).\n";
  out += "# TYPE simdup_http_event_loops gauge\n";
  out += "simdup_http_event_loops " + std::to_string(event_loops) + "\n";
  out += "# HELP simdup_requests_total HTTP requests by endpoint and status code.\n";
  out += "# TYPE simdup_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out += "simdup_requests_total{endpoint=\"" + key.first + "\",code=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP simdup_request_duration_seconds Request latency by endpoint.\n";
  out += "# TYPE simdup_request_duration_seconds histogram\n";
  for (const auto& [endpoint, h] : latency_) {
    uint64_t cumulative = 0;
    const std::string label = "{endpoint=\"" + endpoint + "\",le=\"";
    for (std::size_t b = 0; b < bounds_.size(); ++b) {
      cumulative += h.buckets[b];
      out += "simdup_request_duration_seconds_bucket" + label + number(bounds_[b]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "simdup_request_duration_seconds_bucket" + label + "+Inf\"} " + std::to_string(h.count) +
           "\n";
    out += "simdup_request_duration_seconds_sum{endpoint=\"" + endpoint + "\"} " + number(h.sum) +
           "\n";
    out += "simdup_request_duration_seconds_count{endpoint=\"" + endpoint + "\"} " +
           std::to_string(h.count) + "\n";
  }
  out += "# HELP simdup_documents_total Documents answered, by collection and outcome.\n";
  out += "# TYPE simdup_documents_total counter\n";
  for (const auto& [key, n] : documents_) {
    out += "simdup_documents_total{collection=\"" + key.first + "\",outcome=\"" + key.second +
           "\"} " + std::to_string(n) + "\n";
  }
  // One sample per collection of one store figure.
  const auto per_collection = [&](const char* metric, const char* type, const char* help,
                                  uint64_t collection_sample::*field) {
    out += std::string("# HELP ") + metric + " " + help + "\n";
    out += std::string("# TYPE ") + metric + " " + type + "\n";
    for (const auto& [name, s] : collections) {
      out +=
          std::string(metric) + "{collection=\"" + name + "\"} " + std::to_string(s.*field) + "\n";
    }
  };
  per_collection("simdup_index_documents", "gauge", "Documents indexed now, by collection.",
                 &collection_sample::documents);
  per_collection("simdup_index_bytes", "gauge",
                 "Memory held by the in-memory index, by collection.",
                 &collection_sample::index_bytes);
  per_collection("simdup_id_map_bytes", "gauge",
                 "Memory held by the in-memory id map, by collection.",
                 &collection_sample::id_map_bytes);
  per_collection("simdup_expired_documents_total", "counter", "Documents removed by the window.",
                 &collection_sample::expired);
  per_collection("simdup_deleted_documents_total", "counter", "Documents removed by DELETE.",
                 &collection_sample::deleted);
  return out;
}

}  // namespace simdup::detail
