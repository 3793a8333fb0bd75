#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "features/md5.hpp"
#include "util/cpu.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace simdup {
namespace {

std::string hex(const std::array<uint8_t, 16>& digest) {
  std::string out;
  char buf[3];
  for (uint8_t b : digest) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

// The reference: OpenSSL's MD5, which the library used before it had its own.
std::array<uint8_t, 16> openssl_md5(std::string_view s) {
  std::array<uint8_t, 16> digest{};
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(s.data(), s.size(), digest.data(), &len, EVP_md5(), nullptr), 1);
  EXPECT_EQ(len, 16u);
  return digest;
}

uint64_t last8_big_endian(const std::array<uint8_t, 16>& digest) {
  uint64_t v = 0;
  for (int i = 8; i < 16; ++i) v = (v << 8) | digest[i];
  return v;
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Md5, Rfc1321TestSuite) {
  // RFC 1321 appendix A.5.
  EXPECT_EQ(hex(detail::md5_digest("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(hex(detail::md5_digest("a")), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(hex(detail::md5_digest("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(hex(detail::md5_digest("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(hex(detail::md5_digest("abcdefghijklmnopqrstuvwxyz")),
            "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(
      hex(detail::md5_digest("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
      "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(hex(detail::md5_digest("1234567890123456789012345678901234567890123456789012345678"
                                   "9012345678901234567890")),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5, Md64IsLastEightBytesBigEndian) {
  EXPECT_EQ(detail::md5_64(""), 0xe9800998ecf8427eULL);
  EXPECT_EQ(detail::md5_64("abc"), 0xd6963f7d28e17f72ULL);
}

// Every length from 0 to 300 bytes crosses the one-block limit (55), the block size and the
// two-block padding case (56..63 bytes left over) several times.
TEST(Md5, MatchesOpenSslOnEveryLengthUpTo300) {
  std::mt19937_64 rng(20261121);
  for (std::size_t n = 0; n <= 300; ++n) {
    for (int rep = 0; rep < 3; ++rep) {
      const std::string s = random_bytes(rng, n);
      const auto want = openssl_md5(s);
      ASSERT_EQ(hex(detail::md5_digest(s)), hex(want)) << "length " << n;
      ASSERT_EQ(detail::md5_64(s), last8_big_endian(want)) << "length " << n;
    }
  }
}

TEST(Md5, ManyMatchesOneByOne) {
  std::mt19937_64 rng(7);
  // Batch sizes around the lane count, with long inputs mixed in (they skip the lanes), so
  // full groups, partial groups and a lone leftover all occur.
  for (std::size_t count = 0; count <= 40; ++count) {
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t n = rng() % 4 == 0 ? rng() % 200 : rng() % 56;
      texts.push_back(random_bytes(rng, n));
    }
    const std::vector<std::string_view> in(texts.begin(), texts.end());
    std::vector<uint64_t> out(count, 0);
    detail::md5_64_many(in, out);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[i], last8_big_endian(openssl_md5(texts[i])))
          << "batch of " << count << ", input " << i << " of length " << texts[i].size();
    }
  }
}

TEST(Md5, EveryLaneKernelMatchesOneByOne) {
  std::vector<std::pair<const char*, detail::md5_lanes_fn>> kernels = {
      {"generic", &detail::md5_64_lanes_generic}};
#if defined(__x86_64__)
  if (detail::cpu_has_avx2()) kernels.emplace_back("avx2", &detail::md5_64_lanes_avx2);
  if (detail::cpu_has_avx512vl_dq()) kernels.emplace_back("avx512", &detail::md5_64_lanes_avx512);
#endif
  std::mt19937_64 rng(11);
  for (const auto& [name, kernel] : kernels) {
    for (std::size_t count = 1; count <= detail::md5_lanes; ++count) {
      std::vector<std::string> texts;
      for (std::size_t i = 0; i < count; ++i) texts.push_back(random_bytes(rng, rng() % 56));
      const std::vector<std::string_view> in(texts.begin(), texts.end());
      uint64_t out[detail::md5_lanes] = {};
      kernel(in.data(), count, out);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[i], last8_big_endian(openssl_md5(texts[i])))
            << name << ": lane " << i << " of " << count << ", length " << texts[i].size();
      }
    }
  }
}

// A message of at most 16 bytes as md5_64_short_many takes it.
detail::md5_short_message short_message(const std::string& text) {
  char padded[16] = {};
  std::memcpy(padded, text.data(), text.size());
  detail::md5_short_message m;
  std::memcpy(&m.lo, padded, 8);
  std::memcpy(&m.hi, padded + 8, 8);
  m.size = static_cast<uint32_t>(text.size());
  return m;
}

TEST(Md5, EveryShortKernelMatchesOneByOne) {
  std::vector<std::pair<const char*, detail::md5_short_fn>> kernels = {
      {"generic", &detail::md5_64_short_generic}};
#if defined(__x86_64__)
  if (detail::cpu_has_avx2()) kernels.emplace_back("avx2", &detail::md5_64_short_avx2);
  if (detail::cpu_has_avx512vl_dq()) kernels.emplace_back("avx512", &detail::md5_64_short_avx512);
#endif
  std::mt19937_64 rng(13);
  for (const auto& [name, kernel] : kernels) {
    // Every size 0..16 (the padding byte in lo, in hi, and in word 4), in every lane count.
    for (std::size_t count = 1; count <= detail::md5_short_lanes; ++count) {
      std::vector<std::string> texts;
      std::vector<detail::md5_short_message> in;
      for (std::size_t i = 0; i < count; ++i) {
        texts.push_back(random_bytes(rng, (i + count) % 17));
        in.push_back(short_message(texts.back()));
      }
      uint64_t out[detail::md5_short_lanes] = {};
      kernel(in.data(), count, out);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[i], last8_big_endian(openssl_md5(texts[i])))
            << name << ": lane " << i << " of " << count << ", length " << texts[i].size();
      }
    }
  }
}

TEST(Md5, ShortManyMatchesOneByOne) {
  std::mt19937_64 rng(17);
  for (std::size_t count : {0, 1, 31, 32, 33, 100}) {
    std::vector<std::string> texts;
    std::vector<detail::md5_short_message> in;
    for (std::size_t i = 0; i < count; ++i) {
      texts.push_back(random_bytes(rng, rng() % 17));
      in.push_back(short_message(texts.back()));
    }
    std::vector<uint64_t> out(count + 1, 42);
    detail::md5_64_short_many(in, out);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], detail::md5_64(texts[i]));
    EXPECT_EQ(out[count], 42u);  // only what the input holds is written
  }
}

TEST(Md5, ManyWritesOnlyWhatBothSpansHold) {
  const std::vector<std::string_view> in = {"a", "b", "c"};
  std::vector<uint64_t> out(2, 0);
  detail::md5_64_many(in, out);
  EXPECT_EQ(out[0], detail::md5_64("a"));
  EXPECT_EQ(out[1], detail::md5_64("b"));
  std::vector<uint64_t> wide(5, 42);
  detail::md5_64_many(in, wide);
  EXPECT_EQ(wide[2], detail::md5_64("c"));
  EXPECT_EQ(wide[3], 42u);
  EXPECT_EQ(wide[4], 42u);
}

}  // namespace
}  // namespace simdup
