// SPDX-License-Identifier: Apache-2.0
// accel-bench amp without CUDA kernels in the build: says so.
#include <cstdio>

#include "apps/bench/bench.h"

namespace accel::bench {

void runAmpDevice(const Args&, size_t) {
  std::printf(
      "# accel-bench amp (GPU): skipped: this build has no CUDA kernels (nvcc was not found at configure time)\n");
}

}  // namespace accel::bench
