// SPDX-License-Identifier: Apache-2.0
#include "lib/common/write_fully.h"

#include <unistd.h>

#include <cerrno>

namespace accel {

void writeFully(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace accel
