// SPDX-License-Identifier: Apache-2.0
// The Reducer's one kernel (built when nvcc was found: ACCEL_HAVE_CUDA_KERNELS): the in-place
// pre-division of a gradient by the world size. Asynchronous on `stream` (null: the legacy
// default stream); `data` is a device pointer.
#pragma once

#include <cstddef>

namespace accel::cuda {

void scaleInPlace(float* data, size_t n, float factor, void* stream = nullptr);

}  // namespace accel::cuda
