// Unlinked temporary files for spills (verification's shingle arrays, the batch engine's
// columns): nothing is left behind however the run ends, and writes and reads retry short
// transfers and EINTR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace simdup::detail {

/// Opens a new file named PREFIX-XXXXXX in `dir` (empty: the system's temporary directory, else
/// /tmp) and unlinks it at once; sets `where` to the directory used. The descriptor, or -1 with
/// errno set.
int open_unlinked_temp(const std::string& dir, const char* prefix, std::string& where);

/// Writes all `bytes`; 0, or the errno of the failure (ENOSPC for a write that stored nothing).
int write_all(int fd, const void* data, std::size_t bytes) noexcept;

/// Reads `bytes` at `offset`; 0, or the errno of the failure (EIO for a file that ends early).
int read_all_at(int fd, void* into, std::size_t bytes, uint64_t offset) noexcept;

}  // namespace simdup::detail
