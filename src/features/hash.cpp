#include "features/hash.hpp"

#include <openssl/evp.h>

namespace simdup {
namespace detail {
namespace {

// Fetched once: with OpenSSL 3 a legacy descriptor (EVP_md5()) is re-fetched from the provider
// store on every EVP_DigestInit_ex, which takes a lock and costs more than hashing a shingle.
const EVP_MD* md5_method() noexcept {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "MD5", nullptr);
  return md;
}

uint64_t last8_big_endian(const unsigned char* digest) noexcept {
  uint64_t v = 0;
  for (int i = 8; i < 16; ++i) v = (v << 8) | digest[i];
  return v;
}

}  // namespace

uint64_t xxh3_64_long(std::string_view s) noexcept {
  return XXH3_64bits(s.data(), s.size());
}

md5_hasher::md5_hasher() noexcept : ctx_(EVP_MD_CTX_new()) {}

md5_hasher::~md5_hasher() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

uint64_t md5_hasher::operator()(std::string_view s) noexcept {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  auto* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  const EVP_MD* md = md5_method();
  if (ctx == nullptr || md == nullptr || EVP_DigestInit_ex2(ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, s.data(), s.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, digest, &len) != 1 || len != 16) {
    // Only reachable when OpenSSL cannot allocate or has no MD5 provider.
    if (EVP_Digest(s.data(), s.size(), digest, &len, EVP_md5(), nullptr) != 1 || len != 16)
      return 0;
  }
  return last8_big_endian(digest);
}

}  // namespace detail

uint64_t hash_feature(hash_kind kind, std::string_view feature) noexcept {
  switch (kind) {
    case hash_kind::xxh3:
      return detail::xxh3_64(feature);
    case hash_kind::fnv1a:
      return detail::fnv1a_64(feature);
    case hash_kind::md5: {
      detail::md5_hasher h;
      return h(feature);
    }
  }
  return detail::xxh3_64(feature);
}

}  // namespace simdup
