// The document routes of the dedup service: POST /v1/{c}/check, insert and check-insert (one
// document or a batch), and GET and DELETE /v1/{c}/documents/{id}.
#include <simdup/json.hpp>
#include <simdup/simhash.hpp>

#include <charconv>

#include "service/service_impl.hpp"

namespace simdup {

namespace {

const char* outcome_name(doc_op op, const detail::doc_outcome& o) {
  switch (op) {
    case doc_op::check:
      return o.matches.empty() ? "unique" : "duplicate";
    case doc_op::insert:
      return "inserted";
    case doc_op::check_insert:
      return o.inserted ? "new" : "duplicate";
  }
  return "unknown";
}

}  // namespace

void service::impl::route_documents(const std::string& name, std::string_view sub,
                                    const http::request& req, exchange ex) {
  const std::pair<std::string_view, doc_op> ops[] = {
      {"check", doc_op::check}, {"insert", doc_op::insert}, {"check-insert", doc_op::check_insert}};
  for (const auto& [op_name, op] : ops) {
    if (sub != op_name) continue;
    ex.endpoint = std::string(op_name);
    if (req.method != "POST") return wrong_method(req, ex, "POST");
    return handle_documents(name, req.body, req.query, op, std::move(ex));
  }
  constexpr std::string_view documents = "documents/";
  if (sub.substr(0, documents.size()) == documents && sub.size() > documents.size()) {
    const std::string_view id = sub.substr(documents.size());
    if (req.method == "GET") {
      ex.endpoint = "document";
      return handle_get_document(name, id, req.query, std::move(ex));
    }
    ex.endpoint = "delete";
    if (req.method != "DELETE") return wrong_method(req, ex, "GET, DELETE");
    return handle_delete(name, id, std::move(ex));
  }
  no_endpoint(req, std::move(ex));
}

std::string service::impl::documents_body(const detail::parsed_request& parsed, doc_op op,
                                          bool int_fingerprints, std::span<const doc_route> routes,
                                          std::span<const detail::doc_input> inputs,
                                          std::span<const detail::doc_input> expired,
                                          std::span<const detail::doc_outcome> outcomes,
                                          std::map<std::string, uint64_t>& counts) {
  const auto& docs = parsed.docs;
  const std::vector<detail::doc_match> no_matches;
  std::string body = parsed.batch ? "{\"results\":[" : "";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (i > 0) body.push_back(',');
    body += "{\"id\":";
    const doc_route& route = routes[i];
    if (route.what == doc_route::kind::too_short) {
      json::append_string(body, docs[i].id);
      body += ",\"status\":\"too_short\",\"matches\":[]}";
      ++counts["too_short"];
      continue;
    }
    const bool applied = route.what == doc_route::kind::applied;
    const detail::doc_input& in = applied ? inputs[route.index] : expired[route.index];
    const char* outcome = applied ? outcome_name(op, outcomes[route.index]) : "expired";
    ++counts[outcome];
    json::append_string(body, in.id);
    body += ",\"status\":\"";
    body += outcome;
    body += "\",\"fingerprint\":";
    append_fingerprint(body, in.fingerprint, int_fingerprints);
    body += ",\"matches\":[";
    const auto& matches = applied ? outcomes[route.index].matches : no_matches;
    for (std::size_t m = 0; m < matches.size(); ++m) {
      if (m > 0) body.push_back(',');
      body += "{\"id\":";
      json::append_string(body, matches[m].id);
      body += ",\"distance\":" + std::to_string(matches[m].distance);
      body += ",\"jaccard\":";
      append_jaccard(body, matches[m].jaccard);
      body += "}";
    }
    body += "]}";
  }
  if (parsed.batch) body += "]}";
  return body;
}

void service::impl::append_jaccard(std::string& body, std::optional<double> jaccard) {
  if (!jaccard) {
    body += "null";
    return;
  }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *jaccard);
  body.append(buf, ec == std::errc() ? end : buf);
}

void service::impl::append_fingerprint(std::string& body, uint64_t fp, bool as_integer) {
  if (as_integer) {
    body += std::to_string(fp);
  } else {
    body += '"' + to_hex(fp) + '"';
  }
}

result<bool> service::impl::integer_fingerprints(std::string_view query) {
  bool as_integer = false;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    constexpr std::string_view key = "fingerprint_format=";
    if (param.substr(0, key.size()) != key) continue;
    const std::string_view value = param.substr(key.size());
    if (value != "int" && value != "hex") {
      return make_error(errc::invalid_argument, "fingerprint_format must be hex or int");
    }
    as_integer = value == "int";
  }
  return as_integer;
}

void service::impl::handle_documents(const std::string& name, const std::string& request_body,
                                     std::string_view query, doc_op op, exchange ex) {
  auto config = find(name);
  if (!config) return ex.fail(config.error());
  auto int_fingerprints = integer_fingerprints(query);
  if (!int_fingerprints) return ex.fail(int_fingerprints.error());
  auto parsed = detail::parse_request(request_body, {opt.max_documents, 1024});
  if (!parsed) return ex.fail(parsed.error());
  const int64_t clock = now();
  auto sorted = sort_documents(*config, op, clock, parsed->docs);
  if (!sorted) return ex.fail(sorted.error());
  const auto& [inputs, expired, routes] = *sorted;
  std::vector<detail::doc_outcome> outcomes(inputs.size());
  uint64_t ticket = 0;
  if (!inputs.empty()) {
    auto t = store->apply_pending(*config, op, inputs, clock, opt.max_matches, outcomes);
    if (!t) return ex.fail(t.error());
    ticket = *t;
  }
  std::map<std::string, uint64_t> counts;
  std::string body =
      documents_body(*parsed, op, *int_fingerprints, routes, inputs, expired, outcomes, counts);
  answer_when_durable(ticket, std::move(ex),
                      [this, name = config->name, counts = std::move(counts),
                       body = std::move(body)](exchange& e, const status& durable) mutable {
                        if (!durable) return e.fail(durable.error());
                        for (const auto& [outcome, n] : counts)
                          stats.count_documents(name, outcome, n);
                        e.send(200, std::move(body));
                      });
}

result<service::impl::sorted_documents> service::impl::sort_documents(
    const collection_config& config, doc_op op, int64_t clock,
    std::vector<detail::parsed_doc>& docs) {
  // Documents given as text are fingerprinted first; too short ones, and inserts whose time
  // is already out of the window (a lookup would not find them), are answered without
  // touching the index.
  const bool stores = op != doc_op::check;
  const int64_t window = config.window_s;
  sorted_documents out;
  auto& [inputs, expired, routes] = out;
  routes.resize(docs.size());
  inputs.reserve(docs.size());
  detail::doc_input in;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].fingerprint) {
      in.fingerprint = *docs[i].fingerprint;
      in.sketch.clear();
    } else {
      auto signed_text = texts.sign(config, docs[i].text, in);
      if (!signed_text) return std::move(signed_text).error();
      if (!*signed_text) continue;  // too short
    }
    // Moved: the answer names a document by its input from here on.
    in.id = std::move(docs[i].id);
    in.time = docs[i].time.value_or(clock);
    const bool out_of_window = stores && window > 0 && in.time <= clock - window;
    auto& into = out_of_window ? expired : inputs;
    routes[i] = {out_of_window ? doc_route::kind::expired : doc_route::kind::applied, into.size()};
    into.push_back(std::move(in));
  }
  return out;
}

void service::impl::handle_get_document(const std::string& name, std::string_view raw_id,
                                        std::string_view query, exchange ex) {
  auto config = find(name);
  if (!config) return ex.fail(config.error());
  auto int_fingerprints = integer_fingerprints(query);
  if (!int_fingerprints) return ex.fail(int_fingerprints.error());
  const auto id = http::percent_decode(raw_id);
  if (!id || id->empty()) {
    return ex.fail(400, "invalid_input", "the document id in the path is not valid");
  }
  auto found = store->lookup(*config, *id);
  if (!found) return ex.fail(found.error());
  // Out of the window is gone, even before the expiry loop removes it.
  const int64_t window = config->window_s;
  const int64_t clock = now();
  std::optional<detail::stored_document> doc = found->document;
  if (doc && window > 0 && doc->time + window <= clock) doc.reset();
  std::string body;
  if (doc) {
    body = "{\"id\":";
    json::append_string(body, *id);
    body += ",\"fingerprint\":";
    append_fingerprint(body, doc->fingerprint, *int_fingerprints);
    body += ",\"time\":" + std::to_string(doc->time) + ",\"expires\":";
    body += window > 0 ? std::to_string(doc->time + window) : std::string("null");
    body += "}";
  }
  answer_when_durable(
      found->ticket, std::move(ex),
      [id = *id, body = std::move(body)](exchange& e, const status& durable) mutable {
        if (!durable) return e.fail(durable.error());
        if (body.empty()) {
          return e.fail(404, "not_found", "no document \"" + id + "\"");
        }
        e.send(200, std::move(body));
      });
}

void service::impl::handle_delete(const std::string& name, std::string_view raw_id, exchange ex) {
  auto config = find(name);
  if (!config) return ex.fail(config.error());
  const auto id = http::percent_decode(raw_id);
  if (!id || id->empty()) {
    return ex.fail(400, "invalid_input", "the document id in the path is not valid");
  }
  auto removed = store->remove_pending(*config, *id);
  if (!removed) return ex.fail(removed.error());
  std::string body;
  if (removed->removed) {
    body = "{\"id\":";
    json::append_string(body, *id);
    body += ",\"deleted\":true}";
  }
  // A 404 too waits for the sync: the document may be gone by a removal not yet durable.
  answer_when_durable(removed->ticket, std::move(ex),
                      [found = removed->removed, id = *id, body = std::move(body)](
                          exchange& e, const status& durable) mutable {
                        if (!durable) return e.fail(durable.error());
                        if (!found) return e.fail(404, "not_found", "no document \"" + id + "\"");
                        e.send(200, std::move(body));
                      });
}

}  // namespace simdup
