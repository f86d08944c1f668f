// SPDX-License-Identifier: Apache-2.0
// The Reducer's kernels (built when nvcc was found: ACCEL_HAVE_CUDA_KERNELS): the in-place
// pre-division of a gradient by the world size, for f32, fp16 and bf16 elements (half types
// through f32, rounded to nearest even). Asynchronous on `stream` (null: the legacy default
// stream); `data` is a device pointer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace accel::cuda {

void scaleInPlace(float* data, size_t n, float factor, void* stream = nullptr);
void scaleInPlaceHalf(uint16_t* data, size_t n, float factor, bool bf16, void* stream = nullptr);

}  // namespace accel::cuda
