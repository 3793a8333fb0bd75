#include "features/hash.hpp"

namespace simdup {
namespace detail {

uint64_t xxh3_64_long(std::string_view s) noexcept {
  return XXH3_64bits(s.data(), s.size());
}

}  // namespace detail

uint64_t hash_feature(hash_kind kind, std::string_view feature) noexcept {
  switch (kind) {
    case hash_kind::xxh3:
      return detail::xxh3_64(feature);
    case hash_kind::fnv1a:
      return detail::fnv1a_64(feature);
    case hash_kind::md5:
      return detail::md5_64(feature);
  }
  return detail::xxh3_64(feature);
}

}  // namespace simdup
