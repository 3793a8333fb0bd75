// The status routes of the dedup service: GET /healthz, /metrics, /v1/{c} and /v1/{c}/stats (a
// collection's figures), and /v1/openapi.json.
#include "service/openapi.hpp"
#include "service/service_impl.hpp"

namespace simdup {

void service::impl::route_health(const http::request& req, exchange ex) {
  ex.endpoint = "healthz";
  if (req.method != "GET") return wrong_method(req, ex, "GET");
  if (auto st = store->health(); !st) return ex.fail(st.error());
  ex.send(200, "{\"status\":\"ok\"}");
}

void service::impl::route_metrics(const http::request& req, exchange ex) {
  ex.endpoint = "metrics";
  if (req.method != "GET") return wrong_method(req, ex, "GET");
  std::map<std::string, detail::metrics::collection_sample> samples;
  (void)refresh();
  for (const auto& c : all_collections()) {
    if (auto s = store->stats(c))
      samples[c.name] = {s->documents, s->expired, s->deleted, s->index_bytes, s->id_map_bytes};
  }
  ex.send(200, stats.render(samples, event_loops), "text/plain; version=0.0.4");
}

void service::impl::route_openapi(const http::request& req, exchange ex) {
  ex.endpoint = "openapi";
  if (req.method != "GET") return wrong_method(req, ex, "GET");
  ex.send(200, std::string(detail::openapi_json()));
}

void service::impl::handle_stats(const std::string& name, exchange ex) {
  auto config = find(name);
  if (!config) return ex.fail(config.error());
  auto s = store->stats(*config);
  if (!s) return ex.fail(s.error());
  std::string body = "{\"collection\":" + detail::to_json(*config);
  body += ",\"documents\":" + std::to_string(s->documents);
  body += ",\"inserted\":" + std::to_string(s->inserted);
  body += ",\"expired\":" + std::to_string(s->expired);
  body += ",\"deleted\":" + std::to_string(s->deleted);
  body += ",\"index_bytes\":" + std::to_string(s->index_bytes);
  body += ",\"id_map_bytes\":" + std::to_string(s->id_map_bytes);
  body += ",\"index_segments\":" + std::to_string(s->index_segments) + "}";
  ex.send(200, std::move(body));
}

}  // namespace simdup
