// SPDX-License-Identifier: Apache-2.0
#include "lib/common/build_info.h"

namespace accel {

const BuildInfo& buildInfo() {
  static const BuildInfo info = {
    ACCEL_VERSION_STRING,
#if defined(__clang__)
    "Clang " __clang_version__,
#elif defined(__GNUC__)
    "GCC " __VERSION__,
#else
    "unknown compiler",
#endif
    ACCEL_BUILD_TYPE,
    ACCEL_GLOO_VERSION,
    ACCEL_CUDA_VERSION,
    ACCEL_NCCL_LIBRARY,
  };
  return info;
}

}  // namespace accel
