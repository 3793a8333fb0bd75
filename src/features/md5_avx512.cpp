// The MD5 kernels for AVX-512 F+VL+DQ, compiled with those -m flags
// (src/features/CMakeLists.txt) and called only on CPUs that have them: a one-instruction
// rotate (vprold) and, for short messages, sixteen lanes per 512-bit register.
#include "features/md5_kernel.hpp"

namespace simdup::detail {

void md5_64_lanes_avx512(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept {
  lanes_body(msgs, count, out);
}

void md5_64_short_avx512(const md5_short_message* msgs, std::size_t count, uint64_t* out) noexcept {
  short_body<u32x16, 4>(msgs, count, out);
}

}  // namespace simdup::detail
