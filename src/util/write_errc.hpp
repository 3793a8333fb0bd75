// The error code of a failed write, shared by the components that write files (io's spills,
// dedup's index and its staging).
#pragma once

#include <simdup/error.hpp>

namespace simdup {

/// The code of a write that failed with errno `err`: no_space for a full disk, a file-size limit
/// or a quota (ENOSPC, EFBIG, EDQUOT), io_error otherwise.
errc write_errc(int err) noexcept;

}  // namespace simdup
