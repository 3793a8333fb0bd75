#include <simdup/error.hpp>

#include "util/write_errc.hpp"

#include <cerrno>
#include <string>
#include <utility>

namespace simdup {

const char* errc_name(errc code) noexcept {
  switch (code) {
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::invalid_input:
      return "invalid_input";
    case errc::not_found:
      return "not_found";
    case errc::io_error:
      return "io_error";
    case errc::corrupt_data:
      return "corrupt_data";
    case errc::too_large:
      return "too_large";
    case errc::unsupported:
      return "unsupported";
    case errc::unavailable:
      return "unavailable";
    case errc::internal:
      return "internal";
    case errc::no_space:
      return "no_space";
  }
  return "unknown";
}

error_info invalid_parameter(parameter_info parameter, std::string_view words, errc code) {
  std::string message(words.empty() ? std::string_view(parameter.name) : words);
  if (!parameter.reason.empty())
    message += (parameter.reason.front() == ':' ? "" : " ") + parameter.reason;
  if (!parameter.needs.empty()) message += " " + parameter.needs;
  return error_info{code, std::move(message), std::move(parameter)};
}

errc write_errc(int err) noexcept {
  return err == ENOSPC || err == EFBIG || err == EDQUOT ? errc::no_space : errc::io_error;
}

}  // namespace simdup
