// SPDX-License-Identifier: Apache-2.0
// How this accel was built, as CMake saw it (filled from compile definitions).
#pragma once

#include <string>

namespace accel {

struct BuildInfo {
  std::string version;       // "0.1.0"
  std::string compiler;      // "GCC 12.2.0"
  std::string build_type;    // "RelWithDebInfo"
  std::string gloo_version;  // Gloo the runtime links, e.g. "0.5.0"
  std::string cuda_version;  // CUDA toolkit found at build time; empty when none
  std::string nccl_library;  // NCCL found at build time; empty when none
};

const BuildInfo& buildInfo();

}  // namespace accel
