// The OpenAPI description served at GET /v1/openapi.json: docs/openapi.json, built in.
#pragma once

#include <string_view>

namespace simdup::detail {

/// docs/openapi.json as it was when the library was built.
std::string_view openapi_json() noexcept;

}  // namespace simdup::detail
