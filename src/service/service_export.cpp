// A collection as a dedup index (service::export_index, `POST /v1/{c}/export`): the other half
// of service_import.cpp, so that a batch run can be checked `--against` what a running service
// holds (docs/service.md, "Exporting a collection").
#include <simdup/json.hpp>

#include <filesystem>

#include "service/service_impl.hpp"

namespace simdup {
namespace {

namespace fs = std::filesystem;

// Documents visited between two progress calls.
constexpr uint64_t kProgressEvery = 10000;

}  // namespace

result<service::export_counts> service::impl::export_to(
    const collection_config& config, const std::string& out_dir,
    const std::function<void(uint64_t, uint64_t)>& progress) {
  auto profile = collection_profile(config);
  if (!profile) return std::move(profile).error();
  auto stored = store->stats(config);
  if (!stored) return std::move(stored).error();
  const bool verifies = config.verify > 0;
  // The collection's band keys go with the documents (those without keep zeros: no MinHash
  // candidate).
  const std::size_t bands = verifies ? config.minhash.bands : 0;
  auto writer = dedup_index_writer::create(out_dir, std::move(*profile), bands);
  if (!writer) return std::move(writer).error();
  // A failed export leaves nothing (a directory without a manifest is no index, but a name
  // taken by one would refuse the next try).
  const auto fail = [&](error_info e) {
    std::error_code ec;
    fs::remove_all(out_dir, ec);
    return e;
  };
  const int64_t clock = now();
  service::export_counts counts;
  uint64_t visited = 0;
  auto ticket = store->for_each_document(config, [&](const detail::document_view& d) -> status {
    if (exports_stopping.load(std::memory_order_relaxed)) {
      return make_error(errc::unavailable, "the service is stopping");
    }
    if (++visited % kProgressEvery == 0 && progress) progress(visited, stored->documents);
    // Out of the window is gone, even before the expiry loop removes it.
    if (config.window_s > 0 && d.time + config.window_s <= clock) {
      ++counts.expired;
      return {};
    }
    index_document doc;
    doc.fingerprint = d.fingerprint;
    doc.has_fingerprint = true;
    doc.id = d.id;
    if (verifies) {
      doc.shingles = d.sketch;
      if (d.band_keys.size() == bands) doc.band_keys = d.band_keys;
      if (d.sketch.empty()) ++counts.without_sketch;
    }
    ++counts.documents;
    return writer->add(doc);
  });
  if (!ticket) return fail(std::move(ticket).error());
  // What the export holds must be durable in the store too.
  if (auto st = store->wait_durable(*ticket); !st) return fail(std::move(st).error());
  if (auto st = writer->finish({"simdup serve collection " + config.name}); !st) {
    return fail(std::move(st).error());
  }
  counts.bytes = writer->sizes().total;
  if (progress) progress(visited, stored->documents);
  return counts;
}

result<service::export_counts> service::export_index(
    const std::string& collection, const std::string& out_dir,
    const std::function<void(uint64_t, uint64_t)>& progress) {
  auto config = impl_->find(collection);
  if (!config) return std::move(config).error();
  return impl_->export_to(*config, out_dir, progress);
}

void service::impl::handle_export(const std::string& name, const std::string& request_body,
                                  exchange ex) {
  if (opt.export_dir.empty()) {
    return ex.fail(403, "forbidden",
                   "exports are not enabled on this server: start simdup serve with "
                   "--export-dir DIR to let POST /v1/{collection}/export write DIR/NAME");
  }
  auto export_as = detail::parse_export_name(request_body);
  if (!export_as) return ex.fail(export_as.error());
  auto config = find(name);
  if (!config) return ex.fail(config.error());
  const std::string path = (fs::path(opt.export_dir) / *export_as).string();
  std::lock_guard lock(exports_mu);
  std::error_code ec;
  if (running.contains(*export_as) || fs::exists(path, ec)) {
    return ex.fail(409, "conflict",
                   "an export named \"" + *export_as + "\" exists already in " + opt.export_dir +
                       ": choose another name or remove it");
  }
  // Threads of exports done are joined here, and the rest at stop().
  std::erase_if(exports, [](export_thread& e) {
    if (!e.done->load()) return false;
    e.thread.join();
    return true;
  });
  exports.reserve(exports.size() + 1);  // push_back must not throw with the thread running
  running.insert(*export_as);
  auto done = std::make_shared<std::atomic<bool>>(false);
  exports.push_back({std::thread([this, config = std::move(*config), export_as = *export_as, path,
                                  done, ex = std::move(ex)]() mutable {
                       auto counts = export_to(config, path, {});
                       {
                         std::lock_guard names(exports_mu);
                         running.erase(export_as);
                       }
                       if (!counts) {
                         ex.fail(counts.error());
                       } else {
                         std::string body = "{\"collection\":";
                         json::append_string(body, config.name);
                         body += ",\"name\":";
                         json::append_string(body, export_as);
                         body += ",\"path\":";
                         json::append_string(body, path);
                         body += ",\"documents\":" + std::to_string(counts->documents) +
                                 ",\"expired\":" + std::to_string(counts->expired) +
                                 ",\"without_sketch\":" + std::to_string(counts->without_sketch) +
                                 ",\"bytes\":" + std::to_string(counts->bytes) + "}";
                         ex.send(200, std::move(body));
                       }
                       done->store(true);
                     }),
                     done});
}

void service::impl::join_exports() {
  std::vector<export_thread> all;
  {
    std::lock_guard lock(exports_mu);
    all.swap(exports);
  }
  for (export_thread& e : all) e.thread.join();
}

}  // namespace simdup
