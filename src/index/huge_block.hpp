// Internal: raw aligned blocks of 64-bit words, mapped on transparent huge pages when large.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include <sys/mman.h>

namespace simdup::detail {

/// Raw aligned, zeroed storage: parts of it are used as arrays of other trivially copyable
/// types (at least 64-byte aligned). Large blocks are mapped directly, 2 MiB aligned and
/// marked for transparent huge pages: their readers and writers touch them at random, and with
/// 4 KiB pages most accesses would also miss the TLB; and a mapping goes back to the system
/// the moment it is freed, where a heap block of tens of MB could stay resident as
/// fragmentation and add to the next peak.
struct huge_block {
  static constexpr std::size_t huge = std::size_t{2} << 20;

  explicit huge_block(std::size_t n_words) : words(n_words) {
    if (words * 8 < 2 * huge) {
      bytes = words * 8;
      data = static_cast<uint64_t*>(::operator new (bytes, std::align_val_t{64}));
      std::fill_n(data, words, 0);
      return;
    }
    // Over-map by one huge page and trim both ends to align; fresh anonymous pages are zero.
    bytes = (words * 8 + huge - 1) / huge * huge;
    void* p =
        ::mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (start + huge - 1) / huge * huge;
    if (aligned > start) ::munmap(p, aligned - start);
    if (aligned < start + huge)
      ::munmap(reinterpret_cast<void*>(aligned + bytes), start + huge - aligned);
    data = reinterpret_cast<uint64_t*>(aligned);
    mapped = true;
    ::madvise(data, bytes, MADV_HUGEPAGE);  // a hint: failure is harmless
  }
  huge_block(const huge_block&) = delete;
  huge_block& operator=(const huge_block&) = delete;
  ~huge_block() {
    if (mapped)
      ::munmap(data, bytes);
    else
      ::operator delete (data, std::align_val_t{64});
  }

  /// A shared block of `n_words` zeroed words.
  static std::shared_ptr<huge_block> make(std::size_t n_words) {
    return std::make_shared<huge_block>(n_words);
  }

  std::size_t words = 0;  ///< words requested (usable)
  std::size_t bytes = 0;  ///< bytes allocated or mapped
  uint64_t* data = nullptr;
  bool mapped = false;
};

}  // namespace simdup::detail
