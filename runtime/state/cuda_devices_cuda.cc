// SPDX-License-Identifier: Apache-2.0
// Built with CUDA: the runtime API answers. Without a driver it reports an error and leaves the
// count untouched, hence the 0 start value and treating every error as "no device".
#include <cuda_runtime_api.h>

#include "runtime/state/cuda_devices.h"

namespace accel {

int cudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    return 0;
  }
  return count;
}

}  // namespace accel
