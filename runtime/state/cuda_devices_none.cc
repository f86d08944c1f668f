// SPDX-License-Identifier: Apache-2.0
// Built when CUDA was not found: this runtime uses CPU memory only.
#include "runtime/state/cuda_devices.h"

namespace accel {

int cudaDeviceCount() { return 0; }

}  // namespace accel
