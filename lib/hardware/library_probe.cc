// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/library_probe.h"

#include <fmt/format.h>

#include "lib/common/dynamic_library.h"
#include "lib/hardware/gpu_probe.h"

namespace accel {

std::string ncclVersionString(int code) {
  // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before.
  if (code >= 20900) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

LibraryReport probeLibraries() {
  LibraryReport r;
  {
    DynamicLibrary nccl("libnccl.so.2");
    auto get = nccl.symbol<int (*)(int*)>("ncclGetVersion");
    int code = 0;
    if (!nccl) {
      r.nccl_error = nccl.error();
    } else if (!get || get(&code) != 0) {
      r.nccl_error = "ncclGetVersion failed";
    } else {
      r.nccl_version = ncclVersionString(code);
    }
  }
  for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
    DynamicLibrary cudart(name);
    if (!cudart) {
      if (r.cuda_runtime_error.empty()) r.cuda_runtime_error = cudart.error();
      continue;
    }
    auto get = cudart.symbol<int (*)(int*)>("cudaRuntimeGetVersion");
    int version = 0;
    if (get && get(&version) == 0) {
      r.cuda_runtime_version = cudaVersionString(version);
      r.cuda_runtime_library = name;
      r.cuda_runtime_error.clear();
      break;
    }
  }
  return r;
}

}  // namespace accel
