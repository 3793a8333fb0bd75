// The state and handlers of the dedup service (simdup/service.hpp), internal to the service
// component. Defined by resource: service.cpp (lifetime, routing, authentication, expiry loop),
// service_collections.cpp (PUT, DELETE and the list of collections), service_documents.cpp (check,
// insert, check-insert and single documents), service_status.cpp (health, metrics, stats, the
// OpenAPI description), service_import.cpp and service_export.cpp (a collection from and to a
// dedup index).
#pragma once

#include <simdup/dedup_index.hpp>
#include <simdup/service.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "service/http_server.hpp"
#include "service/metrics.hpp"
#include "service/request.hpp"
#include "service/text_fingerprints.hpp"
#include "store/backend.hpp"

namespace simdup {

namespace http = detail::http;
using detail::collection_config;
using detail::doc_op;

/// The profile a collection's documents have in the index format's terms (service_import.cpp):
/// its fingerprint settings, verification (over its sketch size) and MinHash bands.
result<index_profile> collection_profile(const collection_config& config);

struct service::impl {
  service_options opt;
  std::unique_ptr<detail::backend> store;
  std::string token;
  detail::metrics stats;
  detail::text_fingerprints texts;
  std::unique_ptr<http::server> http_server;
  int event_loops = 0;  ///< the HTTP server's, once started (/metrics)
  std::thread expirer;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  bool stopped = false;
  std::shared_mutex collections_mu;
  std::map<std::string, collection_config> collections;
  /// Exports over HTTP run on threads of their own (not the event loops), joined by stop();
  /// `running` holds the names being written (under exports_mu), `exports_stopping` makes
  /// those in progress fail once stop() begins.
  struct export_thread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex exports_mu;
  std::vector<export_thread> exports;
  std::set<std::string> running;
  std::atomic<bool> exports_stopping{false};

  /// One request's answer in the making: sent once, with its status and latency counted under
  /// its endpoint's name.
  struct exchange {
    impl* s;
    std::string endpoint;
    std::chrono::steady_clock::time_point start;
    http::reply reply;

    void send(int code, std::string body, std::string content_type = "application/json",
              std::vector<std::pair<std::string, std::string>> headers = {}) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      // Counted before the answer leaves: a client that reads its answer and then asks for
      // /metrics (on another loop) must see it counted. A send that throws (out of memory) is
      // answered, and counted again, as a 500.
      s->stats.observe_request(endpoint, code, took.count());
      reply.send({code, std::move(content_type), std::move(body), std::move(headers)});
    }
    void fail(int code, std::string_view error_code, std::string_view message) {
      send(code, http::error_body(error_code, message));
    }
    /// With the HTTP status of the error's code.
    void fail(const error_info& err);
  };

  // service.cpp
  bool redis_store() const { return opt.store.rfind("redis://", 0) == 0; }
  int64_t now() const;
  /// The collection's settings; on a miss, reloads the list from the store, since another
  /// process sharing a Redis store may have created it.
  result<collection_config> find(const std::string& name);
  /// Replaces the list with the store's (another process sharing a Redis store may have
  /// created or deleted some).
  status refresh();
  /// A copy of the list of collections.
  std::vector<collection_config> all_collections();
  collection_config defaults(const std::string& name) const;
  bool authorized(const http::request& req) const;
  void serve(http::request&& req, http::reply reply);
  /// Routes a request; every path answers through `ex` exactly once.
  void route(http::request&& req, exchange ex);
  /// 405 for a method the path does not take, naming those it does (`allowed`).
  static void wrong_method(const http::request& req, exchange& ex, const char* allowed);
  /// 404 for a path no route takes.
  static void no_endpoint(const http::request& req, exchange ex);
  void expire_loop();

  /// Calls answer(exchange&, status) once the store's changes under `ticket` are durable: at
  /// once for ticket 0, else from the store's sync thread (the event loop serves others
  /// meanwhile).
  template <class Answer>
  void answer_when_durable(uint64_t ticket, exchange ex, Answer answer) {
    if (ticket == 0) return answer(ex, status{});
    // std::function needs a copyable callable: the exchange (move-only) is shared.
    auto shared = std::make_shared<exchange>(std::move(ex));
    store->when_durable(
        ticket, [shared, answer = std::move(answer)](status st) mutable { answer(*shared, st); });
  }

  // service_collections.cpp
  /// /v1/{c} and everything under it.
  void route_collection(const http::request& req, exchange ex);
  void handle_put(const std::string& name, const std::string& request_body, exchange ex);
  /// GET /v1: every collection's settings and document count, by name.
  void handle_list(exchange ex);
  /// DELETE /v1/{c}: the collection and its documents, durably (synced before the answer).
  void handle_drop(const std::string& name, exchange ex);

  // service_documents.cpp
  /// /v1/{c}/{sub} for the document routes: check, insert, check-insert, documents/{id}.
  void route_documents(const std::string& name, std::string_view sub, const http::request& req,
                       exchange ex);
  /// Where a request's document went: answered at once (too short to fingerprint, or an insert
  /// already out of the window) or to the store as inputs[index].
  struct doc_route {
    enum class kind { too_short, expired, applied } what = kind::too_short;
    std::size_t index = 0;  ///< into the inputs (applied) or the expired documents
  };
  /// The answer body of a documents request, counting outcomes into `counts`.
  static std::string documents_body(const detail::parsed_request& parsed, doc_op op,
                                    bool int_fingerprints, std::span<const doc_route> routes,
                                    std::span<const detail::doc_input> inputs,
                                    std::span<const detail::doc_input> expired,
                                    std::span<const detail::doc_outcome> outcomes,
                                    std::map<std::string, uint64_t>& counts);
  /// A match's Jaccard estimate (shortest round-trip form), or null when it was not verified.
  static void append_jaccard(std::string& body, std::optional<double> jaccard);
  /// A fingerprint in an answer: 16 hex digits, or the unsigned integer with
  /// ?fingerprint_format=int.
  static void append_fingerprint(std::string& body, uint64_t fp, bool as_integer);
  /// Whether the query asks for integer fingerprints (`fingerprint_format=int`; `hex`, the
  /// default, or no such parameter: hex). Other parameters are ignored.
  static result<bool> integer_fingerprints(std::string_view query);
  /// The documents of a request that go to the store (`inputs`, fingerprinted) and those that
  /// are answered at once (`expired`, and those too short to fingerprint), by `routes`.
  struct sorted_documents {
    std::vector<detail::doc_input> inputs;
    std::vector<detail::doc_input> expired;
    std::vector<doc_route> routes;
  };
  /// Sorts the parsed documents, moving their ids; errors when a text cannot be fingerprinted.
  result<sorted_documents> sort_documents(const collection_config& config, doc_op op, int64_t clock,
                                          std::vector<detail::parsed_doc>& docs);
  /// Answers once the store says the changes are durable (at once when nothing was written).
  void handle_documents(const std::string& name, const std::string& request_body,
                        std::string_view query, doc_op op, exchange ex);
  /// GET /v1/{c}/documents/{id}: its fingerprint, time and when the window drops it.
  void handle_get_document(const std::string& name, std::string_view raw_id, std::string_view query,
                           exchange ex);
  void handle_delete(const std::string& name, std::string_view raw_id, exchange ex);

  // service_export.cpp
  /// service::export_index of a collection found already.
  result<service::export_counts> export_to(const collection_config& config,
                                           const std::string& out_dir,
                                           const std::function<void(uint64_t, uint64_t)>& progress);
  /// POST /v1/{c}/export: export_to(export_dir/NAME) on a thread of its own, answered from it.
  void handle_export(const std::string& name, const std::string& request_body, exchange ex);
  /// Joins the export threads (stop(), once exports_stopping is set).
  void join_exports();

  // service_status.cpp
  /// GET /healthz, answered without a token.
  void route_health(const http::request& req, exchange ex);
  /// GET /metrics.
  void route_metrics(const http::request& req, exchange ex);
  /// GET /v1/openapi.json.
  static void route_openapi(const http::request& req, exchange ex);
  /// GET /v1/{c} and /v1/{c}/stats.
  void handle_stats(const std::string& name, exchange ex);
};

}  // namespace simdup
