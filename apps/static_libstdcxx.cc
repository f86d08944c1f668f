// SPDX-License-Identifier: Apache-2.0
// For an executable that links libstdc++ statically (`accel`): GCC 12's libstdc++.a reaches
// glibc 2.36's arc4random from std::runtime_error's old-ABI strings through std::random_device,
// which nothing here calls; that one reference would make the executable refuse to start on an
// older glibc (the baseline, docs/install.md: 2.35). The link wraps it (-Wl,--wrap=arc4random)
// to this, so the executable needs no symbol newer than the baseline. Should a call ever come, it
// is served from the kernel (lib/common/random_bytes.h).
#include <cstdint>

#include "lib/common/random_bytes.h"

extern "C" uint32_t __wrap_arc4random() {
  uint32_t v = 0;
  accel::randomBytes(&v, sizeof v);
  return v;
}
