// The collection routes of the dedup service: PUT, GET and DELETE /v1/{c}, GET /v1 (the list), and
// the dispatch of what lies under /v1/{c}/ (POST /v1/{c}/export: service_export.cpp).
#include <simdup/json.hpp>

#include "service/service_impl.hpp"

namespace simdup {

void service::impl::route_collection(const http::request& req, exchange ex) {
  const std::string_view rest = std::string_view(req.path).substr(std::string_view("/v1/").size());
  const std::size_t slash = rest.find('/');
  const std::string name(rest.substr(0, slash));
  if (!detail::valid_collection_name(name)) return no_endpoint(req, std::move(ex));
  if (slash != std::string_view::npos) {
    const std::string_view sub = rest.substr(slash + 1);
    if (sub == "stats") {
      ex.endpoint = "stats";
      if (req.method != "GET") return wrong_method(req, ex, "GET");
      return handle_stats(name, std::move(ex));
    }
    if (sub == "export") {
      ex.endpoint = "export";
      if (req.method != "POST") return wrong_method(req, ex, "POST");
      return handle_export(name, req.body, std::move(ex));
    }
    return route_documents(name, sub, req, std::move(ex));
  }
  if (req.method == "PUT") {
    ex.endpoint = "create";
    return handle_put(name, req.body, std::move(ex));
  }
  if (req.method == "GET") {
    ex.endpoint = "collection";
    return handle_stats(name, std::move(ex));
  }
  if (req.method == "DELETE") {
    ex.endpoint = "drop";
    return handle_drop(name, std::move(ex));
  }
  ex.endpoint = "collection";
  wrong_method(req, ex, "GET, PUT, DELETE");
}

void service::impl::handle_put(const std::string& name, const std::string& request_body,
                               exchange ex) {
  // Fields left out keep an existing collection's values rather than today's defaults, so
  // that a client re-sending its settings at start is not refused once defaults change (a
  // collection made before verification, say, keeps k 3 and no verification).
  auto existing = find(name);
  auto config = detail::config_from_json(request_body, existing ? *existing : defaults(name));
  if (!config) return ex.fail(config.error());
  config->name = name;
  if (auto st = store->create(*config); !st) return ex.fail(st.error());
  {
    std::unique_lock lock(collections_mu);
    collections[name] = *config;
  }
  ex.send(200, detail::to_json(*config));
}

void service::impl::handle_list(exchange ex) {
  if (auto st = refresh(); !st) return ex.fail(st.error());
  const std::vector<collection_config> all = all_collections();
  std::string body = "{\"collections\":[";
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto s = store->stats(all[i]);
    if (!s && s.error().code == errc::not_found) continue;  // deleted meanwhile
    if (!s) return ex.fail(s.error());
    if (body.back() != '[') body.push_back(',');
    std::string settings = detail::to_json(all[i]);
    settings.pop_back();  // the closing brace: the count goes inside
    body += settings + ",\"documents\":" + std::to_string(s->documents) + "}";
  }
  body += "]}";
  ex.send(200, std::move(body));
}

void service::impl::handle_drop(const std::string& name, exchange ex) {
  if (auto st = store->drop(name); !st) return ex.fail(st.error());
  {
    std::unique_lock lock(collections_mu);
    collections.erase(name);
  }
  std::string body = "{\"name\":";
  json::append_string(body, name);
  body += ",\"deleted\":true}";
  ex.send(200, std::move(body));
}

}  // namespace simdup
