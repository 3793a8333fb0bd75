#include "features/md5.hpp"

#include "features/md5_kernel.hpp"

#include "util/cpu.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace simdup::detail {
namespace {

// One 64-byte block into `state`.
void compress(uint32_t (&state)[4], const unsigned char* block) noexcept {
  uint32_t x[1][16];
  for (int i = 0; i < 16; ++i) x[0][i] = load_le32(block + 4 * i);
  uint32_t a[1] = {state[0]}, b[1] = {state[1]}, c[1] = {state[2]}, d[1] = {state[3]};
  md5_rounds(a, b, c, d, x);
  state[0] += a[0];
  state[1] += b[0];
  state[2] += c[0];
  state[3] += d[0];
}

// Chosen once: the widest kernel this CPU runs.
md5_short_fn best_md5_short() noexcept {
#if defined(__x86_64__)
  static const md5_short_fn best = cpu_has_avx512vl_dq() ? &md5_64_short_avx512
                                   : cpu_has_avx2()      ? &md5_64_short_avx2
                                                         : &md5_64_short_generic;
  return best;
#else
  return &md5_64_short_generic;
#endif
}

// Chosen once: the widest kernel this CPU runs.
md5_lanes_fn best_md5_lanes() noexcept {
#if defined(__x86_64__)
  static const md5_lanes_fn best = cpu_has_avx512vl_dq() ? &md5_64_lanes_avx512
                                   : cpu_has_avx2()      ? &md5_64_lanes_avx2
                                                         : &md5_64_lanes_generic;
  return best;
#else
  return &md5_64_lanes_generic;
#endif
}

// The final state words of MD5(data): whole blocks straight from the input, then the rest
// padded (0x80, zeros, the bit length as 64 bits little-endian) into one block when at most
// 55 bytes remain, two otherwise.
void md5_state(std::string_view data, uint32_t (&state)[4]) noexcept {
  std::memcpy(state, kInit, sizeof(state));
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t n = data.size();
  const std::size_t whole = n / 64 * 64;
  for (std::size_t off = 0; off < whole; off += 64) compress(state, p + off);
  unsigned char tail[128] = {};
  const std::size_t rest = n - whole;
  if (rest > 0) std::memcpy(tail, p + whole, rest);
  tail[rest] = 0x80;
  const std::size_t tail_len = rest < 56 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(n) * 8;  // modulo 2^64, as the RFC says
  for (int i = 0; i < 8; ++i) tail[tail_len - 8 + i] = static_cast<unsigned char>(bits >> (8 * i));
  compress(state, tail);
  if (tail_len == 128) compress(state, tail + 64);
}

}  // namespace

void md5_64_lanes_generic(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept {
  lanes_body(msgs, count, out);
}

void md5_64_short_generic(const md5_short_message* msgs, std::size_t count,
                          uint64_t* out) noexcept {
  for (std::size_t i = 0; i < count; i += 32) {
    short_body<u32x8, 4>(msgs + i, std::min<std::size_t>(32, count - i), out + i);
  }
}

void md5_64_short_many(std::span<const md5_short_message> in, std::span<uint64_t> out) noexcept {
  const std::size_t n = std::min(in.size(), out.size());
  const md5_short_fn kernel = best_md5_short();
  for (std::size_t i = 0; i < n; i += md5_short_lanes) {
    kernel(in.data() + i, std::min(md5_short_lanes, n - i), out.data() + i);
  }
}

std::array<uint8_t, 16> md5_digest(std::string_view data) noexcept {
  uint32_t state[4];
  md5_state(data, state);
  std::array<uint8_t, 16> digest{};
  for (int w = 0; w < 4; ++w) {
    for (int k = 0; k < 4; ++k) digest[4 * w + k] = static_cast<uint8_t>(state[w] >> (8 * k));
  }
  return digest;
}

uint64_t md5_64(std::string_view data) noexcept {
  uint32_t state[4];
  md5_state(data, state);
  return last8_big_endian(state[2], state[3]);
}

void md5_64_many(std::span<const std::string_view> in, std::span<uint64_t> out) noexcept {
  const std::size_t n = std::min(in.size(), out.size());
  const md5_lanes_fn lanes = best_md5_lanes();
  std::string_view batch[md5_lanes];
  std::size_t where[md5_lanes];
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (in[i].size() > 55) {
      out[i] = md5_64(in[i]);
      continue;
    }
    batch[k] = in[i];
    where[k] = i;
    if (++k == md5_lanes) {
      uint64_t h[md5_lanes];
      lanes(batch, k, h);
      for (std::size_t l = 0; l < k; ++l) out[where[l]] = h[l];
      k = 0;
    }
  }
  // A lone leftover is not worth a pass over all the lanes.
  if (k == 1) {
    out[where[0]] = md5_64(batch[0]);
  } else if (k > 1) {
    uint64_t h[md5_lanes];
    lanes(batch, k, h);
    for (std::size_t l = 0; l < k; ++l) out[where[l]] = h[l];
  }
}

}  // namespace simdup::detail
