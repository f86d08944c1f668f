// SPDX-License-Identifier: Apache-2.0
// Writing to a descriptor that must not stop the caller: the console, a pipe to a parent.
#pragma once

#include <string_view>

namespace accel {

// Writes all of `text` to `fd`, retrying on EINTR; gives up silently on EPIPE and other errors
// (a closed console, or a reader that went away, must not stop a job).
void writeFully(int fd, std::string_view text);

}  // namespace accel
