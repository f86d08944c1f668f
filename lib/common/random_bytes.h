// SPDX-License-Identifier: Apache-2.0
// The one source of unpredictable bits: run ids, store tokens, nonces, random names and ports.
// From the kernel's getrandom(2), never std::random_device: the executables link libstdc++
// statically, and GCC 12's random_device pulls in glibc 2.36's arc4random, which would make
// them refuse to start on an older glibc (Ubuntu 22.04's 2.35: docs/install.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel {

// Fills `size` bytes. Throws Error naming the system's reason when the kernel gives none.
void randomBytes(void* out, size_t size);

inline uint64_t randomU64() {
  uint64_t v = 0;
  randomBytes(&v, sizeof v);
  return v;
}

// `bytes` random bytes as lower-case hex (twice as many characters).
std::string randomHex(size_t bytes);

}  // namespace accel
