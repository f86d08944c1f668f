// SPDX-License-Identifier: Apache-2.0
// The amp kernels on CUDA memory (built when nvcc was found: ACCEL_HAVE_CUDA_KERNELS): casts
// fp32 <-> fp16/bf16 with round-to-nearest-even (__float2half_rn / __float2bfloat16_rn, the
// same results as runtime/comm/half.h on CPU), the fused unscale + inf/NaN check, and in-place
// scaling (the Reducer's pre-division by the world size). Asynchronous on `stream` (0: the
// legacy default stream); pointers are device pointers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace accel::cuda {

void castToFp16(const float* in, uint16_t* out, size_t n, void* stream = nullptr);
void castFromFp16(const uint16_t* in, float* out, size_t n, void* stream = nullptr);
void castToBf16(const float* in, uint16_t* out, size_t n, void* stream = nullptr);
void castFromBf16(const uint16_t* in, float* out, size_t n, void* stream = nullptr);
// grads *= inv_scale; sets *found_inf (device int) to 1 when any result is inf or NaN.
void unscaleAndCheck(float* grads, size_t n, float inv_scale, int* found_inf, void* stream = nullptr);
// data *= factor, unfused (the CPU's product); half types through f32, rounded to nearest even.
void scaleInPlace(float* data, size_t n, float factor, void* stream = nullptr);
void scaleInPlaceHalf(uint16_t* data, size_t n, float factor, bool bf16, void* stream = nullptr);

}  // namespace accel::cuda
