// SPDX-License-Identifier: Apache-2.0
// The one check of a CUDA runtime call, for every CUDA path of the runtime and of the programs
// (included only where CUDA is built; here in comm/, the lowest layer that calls CUDA). A failed call throws CudaError
// "WHAT: CUDA error: TEXT", with `hint` as its fix, and clears CUDA's last error so that the next call reports its own.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "lib/common/error.h"

namespace accel {

class CudaError : public Error {
 public:
  using Error::Error;
};

inline void checkCuda(cudaError_t result, const std::string& what, std::string hint = {}) {
  if (result == cudaSuccess) return;
  cudaGetLastError();
  throw CudaError(what + ": CUDA error: " + cudaGetErrorString(result), std::move(hint));
}

}  // namespace accel
