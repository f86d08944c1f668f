// SPDX-License-Identifier: Apache-2.0
// Versions of the GPU libraries workers will load (NCCL, the CUDA runtime), found by dlopen as
// a worker would find them. Blocking (milliseconds; libnccl is large); never throws.
#pragma once

#include <string>

namespace accel {

struct LibraryReport {
  std::string nccl_version;          // "2.28.9"; empty when libnccl.so.2 did not load
  std::string nccl_error;            // why not
  std::string cuda_runtime_version;  // "13.0"; empty when no libcudart loaded
  std::string cuda_runtime_library;  // the file name that loaded, e.g. "libcudart.so.13"
  std::string cuda_runtime_error;
};

LibraryReport probeLibraries();

// NCCL's version code as a dotted version: 22809 → "2.28.9", 2708 → "2.7.8".
std::string ncclVersionString(int code);

}  // namespace accel
