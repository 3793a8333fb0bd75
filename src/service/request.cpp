#include "service/request.hpp"

#include <simdup/simhash.hpp>
#include <simdup/utf8.hpp>

#include <simdjson.h>

#include "store/backend.hpp"

namespace simdup::detail {
namespace {

std::string where(std::size_t index, bool batch) {
  return batch ? "documents[" + std::to_string(index) + "]" : "document";
}

result<parsed_doc> parse_doc(simdjson::dom::element el, std::size_t index, bool batch,
                             const request_limits& limits) {
  simdjson::dom::object obj;
  if (el.get(obj) != simdjson::SUCCESS) {
    return make_error(errc::invalid_input, where(index, batch) + " must be a JSON object");
  }
  parsed_doc doc;
  bool has_id = false, has_text = false;
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "id") {
      std::string_view s;
      int64_t i;
      uint64_t u;
      if (field.value.get(s) == simdjson::SUCCESS)
        doc.id = std::string(s);
      else if (field.value.get(i) == simdjson::SUCCESS)
        doc.id = std::to_string(i);
      else if (field.value.get(u) == simdjson::SUCCESS)
        doc.id = std::to_string(u);
      else {
        return make_error(errc::invalid_input,
                          where(index, batch) + ": \"id\" must be a string or an integer");
      }
      has_id = true;
    } else if (key == "text") {
      std::string_view s;
      if (field.value.get(s) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input, where(index, batch) + ": \"text\" must be a string");
      }
      doc.text = std::string(s);
      has_text = true;
    } else if (key == "fingerprint") {
      // 16 hex digits, or the unsigned 64-bit integer itself (as Python users hold it).
      uint64_t value;
      if (field.value.is_number()) {
        if (field.value.get(value) != simdjson::SUCCESS) {
          return make_error(
              errc::invalid_input,
              where(index, batch) + ": \"fingerprint\" must be an integer from 0 to 2^64 - 1");
        }
        doc.fingerprint = value;
        continue;
      }
      std::string_view s;
      if (field.value.get(s) != simdjson::SUCCESS) {
        return make_error(
            errc::invalid_input,
            where(index, batch) + ": \"fingerprint\" must be 16 hex digits or an unsigned integer");
      }
      auto fp = parse_hex(s);
      if (!fp) {
        return make_error(errc::invalid_input,
                          where(index, batch) + ": \"fingerprint\": " + fp.error().message);
      }
      doc.fingerprint = *fp;
    } else if (key == "time") {
      int64_t t;
      if (field.value.get(t) != simdjson::SUCCESS) {
        return make_error(
            errc::invalid_input,
            where(index, batch) + ": \"time\" must be an integer (seconds since the epoch)");
      }
      doc.time = t;
    }
  }
  if (!has_id || doc.id.empty()) {
    return make_error(errc::invalid_input, where(index, batch) + ": \"id\" is missing or empty");
  }
  if (doc.id.size() > limits.max_id_bytes) {
    return make_error(errc::invalid_input, where(index, batch) + ": \"id\" is longer than " +
                                               std::to_string(limits.max_id_bytes) + " bytes");
  }
  if (has_text == doc.fingerprint.has_value()) {
    return make_error(errc::invalid_input,
                      where(index, batch) + ": give exactly one of \"text\" and \"fingerprint\"");
  }
  return doc;
}

}  // namespace

result<parsed_request> parse_request(std::string_view body, const request_limits& limits) {
  // One parser per thread: it keeps its buffers between requests.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto err = parser.parse(body.data(), body.size()).get(root);
  std::string repaired;
  if (err == simdjson::UTF8_ERROR) {
    // The CLI's rule (io/jsonl_reader.cpp): each ill-formed sequence becomes U+FFFD, so the
    // same text gets the same fingerprint whichever way it comes in.
    utf8::append_repaired(body, repaired);
    err = parser.parse(repaired.data(), repaired.size()).get(root);
  }
  if (err != simdjson::SUCCESS) {
    return make_error(errc::invalid_input, std::string("request body is not valid JSON: ") +
                                               simdjson::error_message(err));
  }
  simdjson::dom::object obj;
  if (root.get(obj) != simdjson::SUCCESS) {
    return make_error(errc::invalid_input, "request body must be a JSON object");
  }
  parsed_request req;
  simdjson::dom::element docs;
  if (obj["documents"].get(docs) == simdjson::SUCCESS) {
    req.batch = true;
    simdjson::dom::array arr;
    if (docs.get(arr) != simdjson::SUCCESS) {
      return make_error(errc::invalid_input, "\"documents\" must be an array");
    }
    if (arr.size() > limits.max_documents) {
      return make_error(errc::too_large, "a request may hold at most " +
                                             std::to_string(limits.max_documents) + " documents");
    }
    if (arr.size() == 0) return make_error(errc::invalid_input, "\"documents\" is empty");
    req.docs.reserve(arr.size());
    std::size_t i = 0;
    for (auto el : arr) {
      auto doc = parse_doc(el, i++, true, limits);
      if (!doc) return std::move(doc).error();
      req.docs.push_back(std::move(*doc));
    }
    return req;
  }
  auto doc = parse_doc(root, 0, false, limits);
  if (!doc) return std::move(doc).error();
  req.docs.push_back(std::move(*doc));
  return req;
}

result<std::string> parse_export_name(std::string_view body) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::string_view name;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS ||
      root["name"].get(name) != simdjson::SUCCESS) {
    return make_error(errc::invalid_input,
                      "the body must be a JSON object with \"name\": the export's name");
  }
  if (name.empty() || name.front() == '.' || !valid_collection_name(name)) {
    return make_error(errc::invalid_argument,
                      "name must be 1 to 64 characters of [A-Za-z0-9_.-], not starting with '.'");
  }
  return std::string(name);
}

}  // namespace simdup::detail
