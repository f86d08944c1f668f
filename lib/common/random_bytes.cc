// SPDX-License-Identifier: Apache-2.0
#include "lib/common/random_bytes.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

void randomBytes(void* out, size_t size) {
  auto* at = static_cast<unsigned char*>(out);
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::getrandom(at + done, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(fmt::format("the kernel gave no random bytes (getrandom: {})", std::strerror(errno)),
                  "run ids, store tokens and nonces need them: is this a kernel older than 3.17?");
    }
    done += static_cast<size_t>(n);
  }
}

std::string randomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  randomBytes(raw.data(), raw.size());
  std::string out;
  for (unsigned char b : raw) out += fmt::format("{:02x}", b);
  return out;
}

}  // namespace accel
