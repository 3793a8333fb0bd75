// The MD5 kernels for AVX2, compiled with -mavx2 (src/features/CMakeLists.txt) and called only
// on CPUs that have it: eight lanes per 256-bit register.
#include "features/md5_kernel.hpp"

#include <algorithm>

namespace simdup::detail {

void md5_64_lanes_avx2(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept {
  lanes_body(msgs, count, out);
}

void md5_64_short_avx2(const md5_short_message* msgs, std::size_t count, uint64_t* out) noexcept {
  for (std::size_t i = 0; i < count; i += 32) {
    short_body<u32x8, 4>(msgs + i, std::min<std::size_t>(32, count - i), out + i);
  }
}

}  // namespace simdup::detail
