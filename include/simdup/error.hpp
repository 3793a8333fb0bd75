// Errors are values at the library boundary: result<T> holds a T or an error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace simdup {

/// Error categories; adapters map them to exit codes, HTTP statuses and Python exceptions.
enum class errc {
  invalid_argument = 1,  ///< a caller-supplied option or parameter is out of range
  invalid_input,         ///< malformed user data (JSON, UTF-8, a fingerprint string)
  not_found,             ///< a file, collection or document does not exist
  io_error,              ///< reading or writing failed (disk full, permission, truncated)
  corrupt_data,          ///< a file we wrote or depend on is damaged or of an unknown version
  too_large,             ///< a size limit was exceeded
  unsupported,           ///< a valid request we do not implement
  unavailable,           ///< a backing service (Redis, PostgreSQL) cannot be reached
  internal,              ///< a bug: an invariant did not hold
  no_space,              ///< a write failed for lack of disk space (or a file-size limit)
};

/// A short stable name for an error code ("invalid_input"), used in JSON errors and logs.
const char* errc_name(errc code) noexcept;

/// The caller-supplied setting an invalid_argument error is about. Adapters name the setting
/// in their own words from this (a CLI flag, a JSON field) instead of parsing `message`, whose
/// wording may change.
struct parameter_info {
  /// Stable name: the option's field in the library's options ("k", "min_features",
  /// "verify.threshold", "verify.shingle_width", "minhash", "clustering", "default_k").
  std::string name;
  /// The rejected value as text ("40", "anchored"); empty when there is none to show.
  std::string value;
  /// What is accepted ("0..32", "(0, 1]", "first, longest, newest or field:NAME"); empty when
  /// the value is fine alone and only its combination is not (see `needs`).
  std::string allowed;
  /// What is wrong, worded to follow the setting's name ("must be at least 1").
  std::string reason;
  /// The setting this value needs and does not have ("verify"); then `reason` ends with the
  /// words that lead to it ("needs").
  std::string needs;
};

struct error_info {
  errc code;
  std::string message;
  /// Set when the error is about one caller-supplied setting.
  std::optional<parameter_info> parameter{};
};

/// Expected-shaped result: either a value or an error. Accessing the wrong side is a bug.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  result(error_info err) : v_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const simdup::error_info& error() const& { return std::get<1>(v_); }
  simdup::error_info&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, simdup::error_info> v_;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error_info err) : err_(std::move(err)), ok_(false) {}

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const simdup::error_info& error() const& { return err_; }
  simdup::error_info&& error() && { return std::move(err_); }

 private:
  simdup::error_info err_{};
  bool ok_ = true;
};

using status = result<void>;

/// Convenience: build an error value.
inline error_info make_error(errc code, std::string message) {
  return error_info{code, std::move(message)};
}

/// An error about one setting (errc::invalid_argument unless `code` says otherwise, as
/// errc::too_large for a memory limit below the minimum). The message is `words` (default: the
/// setting's name) followed by the reason and, for a missing companion, the setting it needs:
/// "verify shingle_width must be at least 1", "anchored clustering needs verify".
error_info invalid_parameter(parameter_info parameter, std::string_view words = {},
                             errc code = errc::invalid_argument);

}  // namespace simdup
